"""Category 4: spec violations (expected: errored)."""
import numpy as np
from onnx import helper as H, TensorProto as TP
from lib import arr, tensor, vi, make_model
from casekit import Feed, node_case, add, Case
from gen_valid import rand_arr, idx_arr

E = 'errored'
I64MIN, I64MAX, I32MAX, I32MIN = -2 ** 63, 2 ** 63 - 1, 2 ** 31 - 1, -2 ** 31


def raw_tensor(dtype_id, dims, raw, name):
    t = TP()
    t.name = name
    t.data_type = dtype_id
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def build():
    d43 = rand_arr('float', (4, 3))
    # ---------------- out of range indices (D3)
    for opset in (1, 11, 13):
        for what, vals, idt in (('oob_pos_eq_size', [0, 4], 'int64'), ('oob_neg_minus_size_minus1', [-5], 'int64'),
                                ('oob_i64_min', [I64MIN], 'int64'), ('oob_i64_max', [1, I64MAX], 'int64'),
                                ('oob_i32_max', [I32MAX], 'int32'), ('oob_i32_min', [0, I32MIN], 'int32')):
            if opset == 1 and what.startswith('oob_neg'):
                continue
            node_case('violation', 'Gather', opset, what,
                      [Feed('data', d43, 'float'), Feed('indices', idx_arr(vals, idt), idt)], expect=E)
        node_case('violation', 'Gather', opset, 'oob_axis1_2d_indices',
                  [Feed('data', d43, 'float'), Feed('indices', idx_arr([[0, 1], [3, 2]], 'int64'), 'int64')],
                  {'axis': 1}, expect=E)
        node_case('violation', 'Gather', opset, 'oob_scalar_index',
                  [Feed('data', d43, 'float'), Feed('indices', idx_arr(7, 'int64'), 'int64')], expect=E)
        node_case('violation', 'Gather', opset, 'zero_size_axis_index0',
                  [Feed('data', rand_arr('float', (0, 3)), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
                  expect=E)
    for opset in (11, 13):
        for what, vals, idt in (('oob_pos_eq_size', [[0, 3], [1, 1]], 'int64'), ('oob_neg', [[-4, 0], [0, 0]], 'int64'),
                                ('oob_i64_min', [[0, I64MIN], [0, 0]], 'int64'), ('oob_i32_max', [[I32MAX, 0], [0, 0]], 'int32'),
                                ('oob_i64_max', [[0, 0], [0, I64MAX]], 'int64')):
            node_case('violation', 'GatherElements', opset, what,
                      [Feed('data', rand_arr('int32', (3, 3)), 'int32'), Feed('indices', idx_arr(vals, idt), idt)],
                      {'axis': 1}, expect=E)
        node_case('violation', 'GatherElements', opset, 'oob_axis0_wrap_would_hide',
                  [Feed('data', rand_arr('int32', (4, 2)), 'int32'), Feed('indices', idx_arr([[4, 0]], 'int64'), 'int64')],
                  expect=E)
    for opset in (11, 13, 16, 18):
        for what, vals, idt in (('oob_pos_eq_size', [[0, 3, 1]], 'int64'), ('oob_neg', [[0, -4, 1]], 'int64'),
                                ('oob_i64_min', [[I64MIN, 0, 0]], 'int64'), ('oob_i32_max', [[0, 0, I32MAX]], 'int32'),
                                ('oob_i64_max', [[0, 0, I64MAX]], 'int64')):
            node_case('violation', 'ScatterElements', opset, what,
                      [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(vals, idt), idt),
                       Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    node_case('violation', 'ScatterElements', 18, 'oob_with_reduction_add',
              [Feed('data', rand_arr('int32', (3, 3)), 'int32'), Feed('indices', idx_arr([[0, 1, 2], [5, 0, 0]], 'int64'), 'int64'),
               Feed('updates', rand_arr('int32', (2, 3)), 'int32')], {'reduction': 'add'}, expect=E)
    for opset in (9, 10):
        for what, vals, idt in (('oob_pos_eq_size', [[0, 3, 1]], 'int64'), ('oob_i64_min', [[I64MIN, 0, 0]], 'int64'),
                                ('oob_i32_max', [[0, 0, I32MAX]], 'int32')):
            node_case('violation', 'Scatter', opset, what,
                      [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(vals, idt), idt),
                       Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    # ---------------- negative index before opset 11 (D2)
    for opset in (1, 7, 10):
        node_case('violation', 'Gather', opset, 'negative_index_before_11',
                  [Feed('data', d43, 'float'), Feed('indices', idx_arr([0, -1], 'int64'), 'int64')], expect=E)
    node_case('violation', 'Gather', 1, 'negative_scalar_index_before_11',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr(-1, 'int32'), 'int32')], {'axis': 1}, expect=E)
    for opset in (9, 10):
        node_case('violation', 'Scatter', opset, 'negative_index_before_11',
                  [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0, -1, 1]], 'int64'), 'int64'),
                   Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    # ---------------- deprecated Scatter / op not existing at the opset (D1, D5)
    for opset in (11, 13, 18):
        node_case('violation', 'Scatter', opset, 'deprecated_at_opset_ge_11',
                  [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
                   Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    node_case('violation', 'Scatter', 8, 'not_existing_before_9',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    node_case('violation', 'GatherElements', 10, 'not_existing_before_11',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64')],
              expect=E)
    node_case('violation', 'ScatterElements', 10, 'not_existing_before_11',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    # ---------------- reduction attribute (D5)
    se = lambda dt='float': [Feed('data', rand_arr(dt, (3, 3)), dt), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
                             Feed('updates', rand_arr(dt, (1, 3)), dt)]
    for opset in (11, 13, 15):
        node_case('violation', 'ScatterElements', opset, 'reduction_attr_add_before_16', se(), {'reduction': 'add'}, expect=E)
        node_case('violation', 'ScatterElements', opset, 'reduction_attr_none_before_16', se(), {'reduction': 'none'}, expect=E)
    for opset in (16, 17):
        node_case('violation', 'ScatterElements', opset, 'reduction_max_at_16', se(), {'reduction': 'max'}, expect=E)
        node_case('violation', 'ScatterElements', opset, 'reduction_min_at_16', se(), {'reduction': 'min'}, expect=E)
    node_case('violation', 'ScatterElements', 16, 'reduction_max_string_at_16', se('string'), {'reduction': 'max'}, expect=E)
    node_case('violation', 'ScatterElements', 16, 'reduction_min_bool_at_16', se('bool'), {'reduction': 'min'}, expect=E)
    for red in ('sub', 'ADD', '', 'mean'):
        node_case('violation', 'ScatterElements', 18, 'reduction_unknown_%s' % (red or 'empty'), se(), {'reduction': red}, expect=E)
    node_case('violation', 'ScatterElements', 18, 'reduction_int_typed_attr', se(), {'reduction': 1}, expect=E)
    node_case('violation', 'Scatter', 10, 'reduction_attr_on_scatter', se(), {'reduction': 'add'}, expect=E)
    # ---------------- axis out of range (D5)
    node_case('violation', 'Gather', 13, 'axis_2_rank_2', [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              {'axis': 2}, expect=E)
    node_case('violation', 'Gather', 1, 'axis_neg3_rank_2', [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              {'axis': -3}, expect=E)
    node_case('violation', 'Gather', 11, 'axis_2_rank_2_empty_indices',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([], 'int64', (0,)), 'int64')], {'axis': 2}, expect=E)
    node_case('violation', 'GatherElements', 13, 'axis_2_rank_2',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([[0]], 'int64'), 'int64')], {'axis': 2}, expect=E)
    node_case('violation', 'GatherElements', 11, 'axis_neg3_rank_2',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([[0]], 'int64'), 'int64')], {'axis': -3}, expect=E)
    node_case('violation', 'ScatterElements', 18, 'axis_neg4_rank_3',
              [Feed('data', rand_arr('float', (2, 2, 2)), 'float'), Feed('indices', idx_arr([[[0]]], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 1, 1)), 'float')], {'axis': -4}, expect=E)
    node_case('violation', 'ScatterElements', 13, 'axis_2_rank_2_empty_indices',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([], 'int64', (0, 3)), 'int64'),
               Feed('updates', rand_arr('float', (0, 3)), 'float')], {'axis': 2}, expect=E)
    node_case('violation', 'Scatter', 9, 'axis_2_rank_2',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0]], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 1)), 'float')], {'axis': 2}, expect=E)
    node_case('violation', 'Gather', 13, 'axis_float_typed_attr',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')], {'axis': 1.0}, expect=E)
    # ---------------- shapes (D6)
    node_case('violation', 'Gather', 13, 'rank0_data',
              [Feed('data', arr(5.0, 'float'), 'float'), Feed('indices', idx_arr(0, 'int64'), 'int64')], expect=E)
    node_case('violation', 'Gather', 1, 'rank0_data_empty_indices',
              [Feed('data', arr(5.0, 'float'), 'float'), Feed('indices', idx_arr([], 'int64', (0,)), 'int64')], expect=E)
    node_case('violation', 'GatherElements', 13, 'rank_mismatch',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64')], expect=E)
    node_case('violation', 'GatherElements', 11, 'rank0_data_rank0_indices',
              [Feed('data', arr(5.0, 'float'), 'float'), Feed('indices', idx_arr(0, 'int64'), 'int64')], expect=E)
    node_case('violation', 'GatherElements', 13, 'indices_dim_gt_data_off_axis',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(np.zeros((4, 2)), 'int64'), 'int64')],
              {'axis': 1}, expect=E)
    node_case('violation', 'GatherElements', 11, 'indices_dim_gt_data_off_axis_empty_axis',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([], 'int64', (4, 0)), 'int64')],
              {'axis': 1}, expect=E)
    node_case('violation', 'ScatterElements', 16, 'rank_mismatch',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (2,)), 'float')], expect=E)
    node_case('violation', 'ScatterElements', 13, 'indices_dim_gt_data_off_axis',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(np.zeros((2, 4)), 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (2, 4)), 'float')], {'axis': 0}, expect=E)
    node_case('violation', 'ScatterElements', 18, 'updates_shape_mismatch_same_numel',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(np.zeros((2, 3)), 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (3, 2)), 'float')], expect=E)
    node_case('violation', 'ScatterElements', 11, 'updates_shape_mismatch_smaller',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(np.zeros((2, 3)), 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 3)), 'float')], expect=E)
    node_case('violation', 'ScatterElements', 13, 'updates_rank_mismatch_empty',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([], 'int64', (0, 3)), 'int64'),
               Feed('updates', rand_arr('float', (0,)), 'float')], expect=E)
    node_case('violation', 'Scatter', 10, 'rank_mismatch',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (2,)), 'float')], expect=E)
    node_case('violation', 'Scatter', 9, 'updates_shape_mismatch',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr(np.zeros((1, 3)), 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 2)), 'float')], expect=E)
    node_case('violation', 'Scatter', 9, 'indices_dim_gt_data_off_axis',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', idx_arr(np.zeros((3, 1)), 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (3, 1)), 'float')], {'axis': 1}, expect=E)
    # ---------------- dtypes (D4)
    for op, opset in (('Gather', 1), ('Gather', 11), ('Gather', 12), ('GatherElements', 11), ('GatherElements', 12)):
        node_case('violation', op, opset, 'bfloat16_not_allowed',
                  [Feed('data', rand_arr('bfloat16', (2, 2)), 'bfloat16'), Feed('indices', idx_arr([[0, 1]], 'int64'), 'int64')],
                  expect=E)
    for op, opset in (('ScatterElements', 11), ('ScatterElements', 12), ('Scatter', 9), ('Scatter', 10)):
        node_case('violation', op, opset, 'bfloat16_not_allowed',
                  [Feed('data', rand_arr('bfloat16', (2, 2)), 'bfloat16'), Feed('indices', idx_arr([[0, 1]], 'int64'), 'int64'),
                   Feed('updates', rand_arr('bfloat16', (1, 2)), 'bfloat16')], expect=E)
    # float8 / int4 data (not in any schema of these ops): hand-built raw tensors
    for opset, op, dtname, dtid, raw in ((13, 'Gather', 'float8e4m3fn', TP.FLOAT8E4M3FN, bytes([0x38, 0x40, 0x44, 0x48])),
                                         (13, 'Gather', 'float8e5m2', TP.FLOAT8E5M2, bytes([0x3c, 0x40, 0x42, 0x44])),
                                         (21, 'Gather', 'int4', TP.INT4, bytes([0x21, 0x43])),
                                         (13, 'GatherElements', 'float8e4m3fn', TP.FLOAT8E4M3FN, bytes([0x38, 0x40, 0x44, 0x48]))):
        ind = idx_arr([1, 0] if op == 'Gather' else [[1, 0]], 'int64')
        dshape = (4,) if op == 'Gather' else (1, 4)
        m = make_model([H.make_node(op, ['data', 'indices'], ['y'], axis=0 if op == 'Gather' else 1)],
                       [vi('data', dtid, dshape), vi('indices', 'int64', ind.shape)], [vi('y', dtid, None)],
                       opsets=(('', opset),))
        out_raw = bytes([raw[1], raw[0]]) if dtid != TP.INT4 else bytes([0x12])
        oshape = [2] if op == 'Gather' else [1, 2]
        add(Case('violation__%s_v%d_%s_data_not_allowed' % ('gather' if op == 'Gather' else 'gather_elements', opset, dtname),
                 E, '%s not allowed by %s (D4)' % (dtname, op), m,
                 [{'inputs': [raw_tensor(dtid, list(dshape), raw, 'data'), tensor(ind, 'int64', 'indices')],
                   'outputs': [raw_tensor(dtid, oshape, out_raw, 'y')]}]))
    for idt in ('int16', 'uint8', 'uint32', 'uint64', 'int8', 'float'):
        node_case('violation', 'Gather', 13, 'indices_dtype_%s' % idt,
                  [Feed('data', d43, 'float'), Feed('indices', np.array([0, 1]).astype({'float': np.float32}.get(idt, idt)), idt)],
                  expect=E)
    node_case('violation', 'GatherElements', 13, 'indices_dtype_int16',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', np.array([[0, 1]], np.int16), 'int16')], expect=E)
    node_case('violation', 'ScatterElements', 18, 'indices_dtype_uint8',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', np.array([[0, 1]], np.uint8), 'uint8'),
               Feed('updates', rand_arr('float', (1, 2)), 'float')], expect=E)
    node_case('violation', 'Scatter', 9, 'indices_dtype_int16',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', np.array([[0, 1]], np.int16), 'int16'),
               Feed('updates', rand_arr('float', (1, 2)), 'float')], expect=E)
    for opset, ddt, udt in ((13, 'float', 'double'), (18, 'int32', 'int64'), (11, 'string', 'float'), (16, 'float16', 'bfloat16')):
        node_case('violation', 'ScatterElements', opset, 'updates_dtype_%s_data_%s' % (udt, ddt),
                  [Feed('data', rand_arr(ddt, (2, 2)), ddt), Feed('indices', idx_arr([[0, 1]], 'int64'), 'int64'),
                   Feed('updates', rand_arr(udt, (1, 2)), udt)], expect=E)
    node_case('violation', 'Scatter', 10, 'updates_dtype_double_data_float',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', idx_arr([[0, 1]], 'int64'), 'int64'),
               Feed('updates', rand_arr('double', (1, 2)), 'double')], expect=E)
    # ---------------- attributes, arity, domains (D1, D5)
    node_case('violation', 'Gather', 13, 'unknown_attribute',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')], {'foo': 1}, expect=E)
    node_case('violation', 'GatherElements', 13, 'unknown_attribute_batch_dims',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([[0]], 'int64'), 'int64')], {'batch_dims': 0}, expect=E)
    node_case('violation', 'ScatterElements', 18, 'unknown_attribute_mode',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', idx_arr([[0, 1]], 'int64'), 'int64'),
               Feed('updates', rand_arr('float', (1, 2)), 'float')], {'mode': 'linear'}, expect=E)
    node_case('violation', 'Gather', 13, 'missing_indices_input',
              [Feed('data', d43, 'float')], expect=E)
    node_case('violation', 'ScatterElements', 13, 'missing_updates_input',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([[0]], 'int64'), 'int64')], expect=E)
    node_case('violation', 'Gather', 13, 'extra_third_input',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'), Feed('axis', idx_arr([0], 'int64'), 'int64')],
              expect=E)
    # node domain not imported (D1): the op would be known if imported
    node_case('violation', 'Gather', 13, 'node_domain_not_imported',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')], domain='com.example',
              compute=False, expect=E, why='node domain com.example is not imported (D1)')
    node_case('violation', 'Gather', 13, 'no_default_domain_import',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              opsets=(('com.example', 1),), compute=False, expect=E,
              why='node domain "" not imported, only com.example (D1)')
    node_case('violation', 'Gather', 13, 'node_domain_microsoft_not_imported',
              [Feed('data', d43, 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')], domain='com.microsoft',
              compute=False, expect=E, why='node domain com.microsoft is not imported (D1)')
    # output larger than --max-tensor-bytes default 4 GiB (D12); expected file is a small stand-in
    big = np.zeros((1, 1 << 20), dtype=bool)
    ind = np.zeros(4200, dtype=np.int64)
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'bool', big.shape), vi('indices', 'int64', ind.shape)], [vi('y', 'bool', None)])
    add(Case('violation__gather_v13_output_exceeds_max_tensor_bytes', E,
             'output 4200 x 2^20 bools = 4.1 GiB > default --max-tensor-bytes 4 GiB (D12)', m,
             [{'inputs': [tensor(big, 'bool', 'data'), tensor(ind, 'int64', 'indices')],
               'outputs': [tensor(np.zeros((1,), bool), 'bool', 'y')]}]))

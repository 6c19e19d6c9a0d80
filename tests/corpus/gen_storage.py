"""Category 2: storage forms (expected: passed)."""
import numpy as np
from onnx import helper as H, TensorProto as TP
from lib import arr, tensor, vi, make_model, CLASSIC15, ref_gather, ref_scatter_elements, ref_gather_elements
from casekit import Feed, node_case, add, Case
from gen_valid import rand_arr, idx_arr, rng


def ext(t, location, offset=None, length=None, extra_keys=()):
    """Turn tensor t (raw) into an external-data tensor; returns (tensor, payload bytes)."""
    payload = t.raw_data
    t.ClearField('raw_data')
    t.data_location = TP.EXTERNAL
    kv = [('location', location)]
    if offset is not None:
        kv.append(('offset', str(offset)))
    if length is not None:
        kv.append(('length', str(length)))
    kv += list(extra_keys)
    for k, v in kv:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t, payload


def build():
    # typed fields for every dtype: data, indices and expected output all typed
    for dt in CLASSIC15 + ['bfloat16']:
        data = rand_arr(dt, (4, 3), special=True)
        idt = 'int32' if dt in ('int8', 'float', 'uint32', 'string', 'bool') else 'int64'
        node_case('storage', 'Gather', 13, 'typed_fields_%s_idx_%s' % (dt, idt),
                  [Feed('data', data, dt, form='typed'),
                   Feed('indices', idx_arr([[3, -1], [0, 2]], idt), idt, form='typed')],
                  {'axis': 0}, out_form='typed', expect='passed')
        # raw inputs, typed expected output (and vice versa for scatter)
        node_case('storage', 'ScatterElements', 13, 'typed_updates_raw_output_%s' % dt,
                  [Feed('data', rand_arr(dt, (2, 3)), dt, form='raw'),
                   Feed('indices', idx_arr([[1, 0, 2]], 'int64'), 'int64', form='typed'),
                   Feed('updates', rand_arr(dt, (1, 3)), dt, form='typed')], {'axis': 1},
                  out_form='raw', expect='passed')
    # special bit patterns in typed float16 / bfloat16 / uint32 / uint64
    node_case('storage', 'Gather', 13, 'typed_float16_special_bits',
              [Feed('data', arr([np.nan, -0.0, np.inf, -np.inf, 6.1e-5, 65504, 1.0, -2.0], 'float16'), 'float16', form='typed'),
               Feed('indices', idx_arr([7, 6, 5, 4, 3, 2, 1, 0], 'int64'), 'int64')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 11, 'typed_uint32_high_values',
              [Feed('data', arr([0, 2 ** 31, 2 ** 32 - 1, 12345], 'uint32'), 'uint32', form='typed'),
               Feed('indices', idx_arr([2, 1, -4], 'int64'), 'int64')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 11, 'typed_uint64_max',
              [Feed('data', arr([0, 2 ** 63, 2 ** 64 - 1], 'uint64'), 'uint64', form='typed'),
               Feed('indices', idx_arr([2, 1], 'int64'), 'int64')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 11, 'typed_int64_extremes',
              [Feed('data', arr([-2 ** 63, 2 ** 63 - 1, 0], 'int64'), 'int64', form='typed'),
               Feed('indices', idx_arr([1, 0], 'int32'), 'int32')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 11, 'typed_complex64_pairs',
              [Feed('data', arr([1 + 2j, -3.5 - 0.25j, 1j], 'complex64'), 'complex64', form='typed'),
               Feed('indices', idx_arr([2, 0], 'int64'), 'int64')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 11, 'typed_complex128_pairs',
              [Feed('data', arr([1 + 2j, -3.5 - 0.25j, 1e300j], 'complex128'), 'complex128', form='typed'),
               Feed('indices', idx_arr([2, 0], 'int64'), 'int64')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 13, 'string_non_utf8_bytes',
              [Feed('data', arr([b'\xff\xfe', b'', b'ok', 'ü'.encode()], 'string'), 'string'),
               Feed('indices', idx_arr([0, 1, 3, 0], 'int64'), 'int64')], expect='passed')
    node_case('storage', 'Gather', 13, 'bool_raw_vs_typed_output',
              [Feed('data', arr([True, False, True], 'bool'), 'bool', form='raw'),
               Feed('indices', idx_arr([1, 0, 2, 1], 'int64'), 'int64')], expect='passed', out_form='typed')
    # scalars
    node_case('storage', 'Gather', 13, 'scalar_index_typed_scalar_output_typed',
              [Feed('data', arr([1.5, 2.5, 3.5], 'float'), 'float'),
               Feed('indices', idx_arr(1, 'int64'), 'int64', form='typed')], expect='passed', out_form='typed')
    node_case('storage', 'Gather', 13, 'scalar_index_int32_raw_scalar_output_raw',
              [Feed('data', arr(['a', 'b'], 'string'), 'string'),
               Feed('indices', idx_arr(-1, 'int32'), 'int32', form='raw')], expect='passed')
    # empty tensors without any data field
    node_case('storage', 'Gather', 13, 'empty_no_data_field',
              [Feed('data', rand_arr('float', (3, 2)), 'float'),
               Feed('indices', idx_arr([], 'int64', (0,)), 'int64')], expect='passed')
    node_case('storage', 'ScatterElements', 13, 'empty_data_no_field_typed',
              [Feed('data', rand_arr('string', (0, 2)), 'string'),
               Feed('indices', idx_arr([], 'int64', (0, 2)), 'int64'),
               Feed('updates', rand_arr('string', (0, 2)), 'string')], expect='passed')
    # initializers (fewer input files)
    node_case('storage', 'Gather', 13, 'indices_initializer_raw',
              [Feed('data', rand_arr('float', (4, 3)), 'float'),
               Feed('indices', idx_arr([[0, 3], [-1, 1]], 'int64'), 'int64', how='init')], {'axis': 0},
              expect='passed')
    node_case('storage', 'Gather', 13, 'data_initializer_typed',
              [Feed('data', rand_arr('int16', (4, 3)), 'int16', how='init', form='typed'),
               Feed('indices', idx_arr([2, 0], 'int32'), 'int32')], {'axis': 1}, expect='passed')
    node_case('storage', 'ScatterElements', 16, 'updates_initializer',
              [Feed('data', rand_arr('double', (3, 3)), 'double'),
               Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
               Feed('updates', rand_arr('double', (1, 3)), 'double', how='init', form='typed')],
              {'reduction': 'add'}, expect='passed')
    node_case('storage', 'GatherElements', 13, 'all_inputs_initializers',
              [Feed('data', rand_arr('uint8', (2, 3)), 'uint8', how='init'),
               Feed('indices', idx_arr([[2, 1, 0], [0, 0, 0]], 'int64'), 'int64', how='init', form='typed')],
              {'axis': 1}, expect='passed')
    node_case('storage', 'Gather', 1, 'initializer_opset1',
              [Feed('data', rand_arr('float', (4, 3)), 'float'),
               Feed('indices', idx_arr([3, 1], 'int64'), 'int64', how='init')], expect='passed')
    # Constant nodes
    node_case('storage', 'Gather', 13, 'constant_value_tensor_raw_indices',
              [Feed('data', rand_arr('float', (4, 3)), 'float'),
               Feed('indices', idx_arr([[0, 3], [-1, 1]], 'int64'), 'int64', how='const')],
              expect='passed')
    node_case('storage', 'Gather', 13, 'constant_value_tensor_typed_data',
              [Feed('data', rand_arr('string', (4, 3)), 'string', how='const'),
               Feed('indices', idx_arr([0, 2], 'int32'), 'int32')], {'axis': 1}, expect='passed')
    node_case('storage', 'Gather', 13, 'constant_value_ints_indices',
              [Feed('data', rand_arr('float', (4, 3)), 'float'),
               Feed('indices', idx_arr([3, -2, 0], 'int64'), 'int64', how='const_ints')],
              expect='passed')
    node_case('storage', 'Gather', 13, 'constant_value_int_scalar_index',
              [Feed('data', rand_arr('int64', (4, 3)), 'int64'),
               Feed('indices', idx_arr(2, 'int64'), 'int64', how='const_int')], {'axis': 1},
              expect='passed')
    node_case('storage', 'Gather', 13, 'constant_value_floats_data',
              [Feed('data', arr([0.5, -1.25, 3.0, 8.0], 'float'), 'float', how='const_floats'),
               Feed('indices', idx_arr([3, 0], 'int64'), 'int64')], expect='passed')
    node_case('storage', 'ScatterElements', 18, 'constant_value_ints_indices_reduction',
              [Feed('data', arr([1, 2, 3], 'float'), 'float'),
               Feed('indices', idx_arr([2, 2, 0], 'int64'), 'int64', how='const_ints'),
               Feed('updates', arr([4, 5, 6], 'float'), 'float', how='const')], {'reduction': 'max'},
              expect='passed')
    node_case('storage', 'Scatter', 10, 'constant_indices',
              [Feed('data', rand_arr('int32', (2, 3)), 'int32'),
               Feed('indices', idx_arr([[2, 0]], 'int64'), 'int64', how='const'),
               Feed('updates', rand_arr('int32', (1, 2)), 'int32')], {'axis': 1}, expect='passed')
    # Identity after the op
    node_case('storage', 'Gather', 13, 'identity_after',
              [Feed('data', rand_arr('float', (4, 3)), 'float'), Feed('indices', idx_arr([1], 'int64'), 'int64')],
              identity_after=1, expect='passed')
    node_case('storage', 'ScatterElements', 16, 'identity_after_x2_reduction',
              [Feed('data', arr([1.5, 2.5], 'float'), 'float'), Feed('indices', idx_arr([1, 1], 'int64'), 'int64'),
               Feed('updates', arr([0.1, 0.2], 'float'), 'float')], {'reduction': 'add'},
              identity_after=2, expect='passed')
    # domain spelled 'ai.onnx' (same as "")
    node_case('storage', 'Gather', 13, 'node_domain_ai_onnx',
              [Feed('data', rand_arr('float', (4, 3)), 'float'), Feed('indices', idx_arr([1, 2], 'int64'), 'int64')],
              domain='ai.onnx', expect='passed')
    node_case('storage', 'GatherElements', 13, 'import_ai_onnx_node_domain_empty',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', idx_arr([[1, 0]], 'int64'), 'int64')],
              opsets=(('ai.onnx', 13),), expect='passed')

    # ---- hand-built graphs
    # Identity before the op, multiple outputs, chain Gather -> ScatterElements
    data = rand_arr('float', (4, 3))
    ind = idx_arr([3, 0], 'int64')
    g = ref_gather(data, ind, 0)
    upd = rand_arr('float', (2, 3))
    sidx = idx_arr([[1, 0, 1], [0, 0, 1]], 'int64')
    s = ref_scatter_elements(g, sidx, upd, 0, 'none', True, 'float')
    nodes = [H.make_node('Identity', ['data'], ['d1']),
             H.make_node('Gather', ['d1', 'indices'], ['g']),
             H.make_node('ScatterElements', ['g', 'sidx', 'upd'], ['s']),
             H.make_node('Identity', ['g'], ['g_copy'])]
    m = make_model(nodes, [vi('data', 'float', (4, 3)), vi('indices', 'int64', (2,)), vi('upd', 'float', (2, 3))],
                   [vi('s', 'float', (2, 3)), vi('g_copy', 'float', (2, 3))],
                   inits=[tensor(sidx, 'int64', 'sidx')], opsets=(('', 13),))
    add(Case('storage__graph_v13_chain_gather_scatter_two_outputs', 'passed', 'chain: numpy reference',
             m, [{'inputs': [tensor(data, 'float', 'data'), tensor(ind, 'int64', 'indices'),
                             tensor(upd, 'float', 'upd')],
                  'outputs': [tensor(s, 'float', 's'), tensor(g, 'float', 'g_copy')]}],
             ort={'feeds': {'data': data, 'indices': ind, 'upd': upd}, 'expected': [s, g], 'reduction': False,
                  'dt': 'float'}))
    # two data sets, both valid
    d0, d1 = rand_arr('int32', (3, 3)), rand_arr('int32', (3, 3))
    i0, i1 = idx_arr([[0, 2]], 'int64'), idx_arr([[-1, 1]], 'int64')
    ds = []
    for d_, i_ in ((d0, i0), (d1, i1)):
        ds.append({'inputs': [tensor(d_, 'int32', 'data'), tensor(i_, 'int64', 'indices')],
                   'outputs': [tensor(ref_gather_elements(d_, i_, 1), 'int32', 'y')]})
    m = make_model([H.make_node('GatherElements', ['data', 'indices'], ['y'], axis=1)],
                   [vi('data', 'int32', (3, 3)), vi('indices', 'int64', (1, 2))], [vi('y', 'int32', (1, 2))],
                   opsets=(('', 13),))
    add(Case('storage__gather_elements_v13_two_data_sets', 'passed', 'both data sets match', m, ds))

    # ---- valid external data
    def ext_case(what, location, offset, length, prefix=b'', suffix=b'', where='input', subdir=''):
        data = rand_arr('float', (2, 3))
        ind = idx_arr([1, 0, 1], 'int64')
        out = ref_gather(data, ind, 0)
        t, payload = ext(tensor(data, 'float', 'data'), location, offset, length)
        blob = prefix + payload + suffix
        if where == 'input':
            extras = [('file', 'test_data_set_0/' + location, blob)]
            m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                           [vi('data', 'float', (2, 3)), vi('indices', 'int64', (3,))], [vi('y', 'float', (3, 3))],
                           opsets=(('', 13),))
            ins = [t, tensor(ind, 'int64', 'indices')]
        else:
            extras = [('file', location, blob)]
            m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                           [vi('indices', 'int64', (3,))], [vi('y', 'float', (3, 3))], inits=[t],
                           opsets=(('', 13),))
            ins = [tensor(ind, 'int64', 'indices')]
        add(Case('storage__gather_v13_external_' + what, 'passed', 'valid external data (section 8)', m,
                 [{'inputs': ins, 'outputs': [tensor(out, 'float', 'y')]}], extras))
    ext_case('input_to_eof', 'data.bin', None, None)
    ext_case('input_offset_length', 'data.bin', 8, 24, prefix=b'\x00' * 8, suffix=b'\x01' * 5)
    ext_case('input_subdir', 'sub/data.bin', None, None)
    ext_case('initializer_model_dir', 'weights.bin', 4096, 24, prefix=b'\x00' * 4096)
    ext_case('input_offset_only', 'data.bin', 3, None, prefix=b'abc')

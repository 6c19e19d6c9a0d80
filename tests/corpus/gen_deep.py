"""Second round: sharper edge cases for the four core ops (added to the same categories)."""
import numpy as np
from onnx import helper as H, TensorProto as TP
from lib import arr, tensor, vi, make_model, ref_gather
from casekit import Feed, node_case, add, Case
from gen_valid import rand_arr, idx_arr

F, P, E, S = 'failed', 'passed', 'errored', 'skipped'


def setv(i, v, st, why, dt=None):
    def f(o, d_):
        o = o.copy()
        o[i] = v
        return tensor(o, dt or d_, 'y'), st, why
    return f


def build():
    # ---- integers must compare exactly, also when they come out of a reduction (D9)
    node_case('tampered', 'ScatterElements', 16, 'int32_reduction_large_off_by_one',
              [Feed('data', arr([1000000, 5], 'int32'), 'int32'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0], 'int32'), 'int32')], {'reduction': 'add'},
              tamper=setv(0, 1000001, F, 'integers compare exactly even for reductions: |1| <= 1e-3*1e6 must NOT pass (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'uint64_reduction_large_off_by_one',
              [Feed('data', arr([2 ** 64 - 2, 5], 'uint64'), 'uint64'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0], 'uint64'), 'uint64')], {'reduction': 'max'},
              tamper=setv(0, 2 ** 64 - 1, F, 'integers compare exactly (D9)'))
    node_case('tampered', 'ScatterElements', 16, 'bool_reduction_differs',
              [Feed('data', arr([True, False], 'bool'), 'bool'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([False], 'bool'), 'bool')], {'reduction': 'mul'},
              tamper=setv(0, True, F, 'bool compares exactly; AND gives false (D8, D9)'))
    node_case('tampered', 'Gather', 13, 'int64_2pow53_plus1',
              [Feed('data', arr([2 ** 53, 1], 'int64'), 'int64'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, 2 ** 53 + 1, F, 'int64 exact; f64 conversion would hide it (D9)'))
    node_case('tampered', 'Gather', 13, 'uint64_max_minus1',
              [Feed('data', arr([2 ** 64 - 2, 1], 'uint64'), 'uint64'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, 2 ** 64 - 1, F, 'uint64 exact (D9)'))
    node_case('tampered', 'ScatterElements', 16, 'int64_reduction_2pow53_plus1',
              [Feed('data', arr([2 ** 53, 1], 'int64'), 'int64'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([1], 'int64'), 'int64')], {'reduction': 'add'},
              tamper=setv(0, 2 ** 53 + 2, F, 'int64 reduction exact: 2^53+1 vs 2^53+2 (D9)'))
    # ---- float data movement exact at the dtype's own precision
    node_case('tampered', 'Gather', 13, 'double_one_ulp',
              [Feed('data', arr([1.0, 2.0], 'double'), 'double'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, 1.0 + 2 ** -52, F, 'double data movement exact (D9); f32 comparison would hide it'))
    node_case('tampered', 'Gather', 13, 'float16_one_ulp',
              [Feed('data', arr([1.0, 2.0], 'float16'), 'float16'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, np.float16(1.0009765625), F, 'float16 data movement exact (D9)'))
    node_case('tampered', 'Gather', 13, 'bfloat16_one_ulp',
              [Feed('data', arr([1.0, 2.0], 'bfloat16'), 'bfloat16'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, 1.0078125, F, 'bfloat16 data movement exact (D9)'))
    node_case('tampered', 'Gather', 13, 'float16_nan_vs_inf',
              [Feed('data', arr([np.inf, 2.0], 'float16'), 'float16'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, np.nan, F, 'NaN is not inf (D9)'))
    node_case('tampered', 'ScatterElements', 13, 'complex128_imag_1e-12',
              [Feed('data', arr([1 + 1j, 2], 'complex128'), 'complex128'), Feed('indices', idx_arr([1], 'int64'), 'int64'),
               Feed('updates', arr([3 + 3j], 'complex128'), 'complex128')],
              tamper=setv(1, 3 + (3 + 1e-12) * 1j, F, 'complex data movement exact (D9)'))
    node_case('tampered', 'Gather', 13, 'subnormal_vs_zero',
              [Feed('data', arr([1e-45, 2.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, 0.0, F, 'subnormal kept exactly (no FTZ) (D9)'))
    node_case('tampered', 'ScatterElements', 16, 'reduction_double_outside_tol_only_visible_in_f64',
              [Feed('data', arr([1e300, 0.0], 'double'), 'double'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([1.0], 'double'), 'double')], {'reduction': 'mul'},
              tamper=setv(0, 1.1e300, F, 'double reduction: 1e300 vs 1.1e300 differs by 10% (in f32 both are inf)'))
    node_case('tampered', 'ScatterElements', 16, 'reduction_double_tiny_values_within_atol',
              [Feed('data', arr([1.0, 0.0], 'double'), 'double'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([1e-300], 'double'), 'double')], {'reduction': 'mul'},
              tamper=setv(0, 1.1e-300, P, '|diff| 1e-301 <= atol 1e-7 (D9)'))
    # ---- per-step rounding of float16 / bfloat16 reductions (D8)
    node_case('valid', 'ScatterElements', 18, 'float16_add_overflow_per_step_inf',
              [Feed('data', arr([60000.0, 1], 'float16'), 'float16'), Feed('indices', idx_arr([0, 0], 'int64'), 'int64'),
               Feed('updates', arr([10000.0, -10000.0], 'float16'), 'float16')], {'reduction': 'add'}, expect=P)
    node_case('valid', 'ScatterElements', 16, 'float16_mul_overflow_per_step_inf',
              [Feed('data', arr([300.0, 1], 'float16'), 'float16'), Feed('indices', idx_arr([0, 0], 'int64'), 'int64'),
               Feed('updates', arr([300.0, 0.001], 'float16'), 'float16')], {'reduction': 'mul'}, expect=P)
    node_case('valid', 'ScatterElements', 18, 'bfloat16_mul_rounding_per_step',
              [Feed('data', arr([1.0078125], 'bfloat16'), 'bfloat16'), Feed('indices', idx_arr([0] * 6, 'int64'), 'int64'),
               Feed('updates', arr([1.0078125] * 6, 'bfloat16'), 'bfloat16')], {'reduction': 'mul'}, expect=P)
    node_case('valid', 'ScatterElements', 18, 'float_mul_sequential_underflow',
              [Feed('data', arr([1e-30], 'float'), 'float'), Feed('indices', idx_arr([0, 0], 'int64'), 'int64'),
               Feed('updates', arr([1e-30, 1e30], 'float'), 'float')], {'reduction': 'mul'}, expect=P)
    node_case('valid', 'ScatterElements', 18, 'float_max_neg_zero_and_inf',
              [Feed('data', arr([-np.inf, 0.0], 'float'), 'float'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64'),
               Feed('updates', arr([-1e38, -0.0], 'float'), 'float')], {'reduction': 'max'}, expect=P)
    node_case('valid', 'ScatterElements', 18, 'string_add_non_utf8_bytes',
              [Feed('data', arr([b'\xc3', b''], 'string'), 'string'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64'),
               Feed('updates', arr([b'\xa9', b'\xff'], 'string'), 'string')], {'reduction': 'add'}, expect=P)
    node_case('valid', 'ScatterElements', 16, 'complex64_mul_chain',
              [Feed('data', arr([1j, 2], 'complex64'), 'complex64'), Feed('indices', idx_arr([0, 0, 0], 'int64'), 'int64'),
               Feed('updates', arr([1j, 1j, 1 + 1j], 'complex64'), 'complex64')], {'reduction': 'mul'}, expect=P)
    node_case('valid', 'ScatterElements', 18, 'int8_min_max_extremes',
              [Feed('data', arr([-128, 127, 0], 'int8'), 'int8'), Feed('indices', idx_arr([0, 1, 2, 2], 'int64'), 'int64'),
               Feed('updates', arr([127, -128, -128, 127], 'int8'), 'int8')], {'reduction': 'min'}, expect=P)
    node_case('valid', 'ScatterElements', 18, 'uint64_max_reduction',
              [Feed('data', arr([2 ** 63, 0], 'uint64'), 'uint64'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64'),
               Feed('updates', arr([2 ** 64 - 1, 2 ** 63 + 1], 'uint64'), 'uint64')], {'reduction': 'max'}, expect=P)
    # ---- opset resolution at the top end
    for opset in (23, 24, 25, 28):
        node_case('valid', 'Gather', opset, 'high_opset_resolves_to_13',
                  [Feed('data', rand_arr('bfloat16', (3, 2)), 'bfloat16'), Feed('indices', idx_arr([-1, 0], 'int64'), 'int64')],
                  expect=P)
        node_case('valid', 'ScatterElements', opset, 'high_opset_resolves_to_18',
                  [Feed('data', rand_arr('float', (3,)), 'float'), Feed('indices', idx_arr([-1, 2], 'int64'), 'int64'),
                   Feed('updates', rand_arr('float', (2,)), 'float')], {'reduction': 'min'}, expect=P)
    # ---- graph plumbing
    data = rand_arr('float', (3, 2))
    ind = idx_arr([2, 0], 'int64')
    g = ref_gather(data, ind, 0)
    m = make_model([H.make_node('Identity', ['g'], ['y']), H.make_node('Gather', ['data', 'indices'], ['g'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    add(Case('violation__graph_v13_nodes_not_topologically_sorted', E,
             "Identity reads 'g' before Gather produces it; nodes run in graph order (D15)", m,
             [{'inputs': [tensor(data, 'float', 'data'), tensor(ind, 'int64', 'indices')], 'outputs': [tensor(g, 'float', 'y')]}]))
    m = make_model([H.make_node('Gather', ['data', 'nope'], ['y'])],
                   [vi('data', 'float', (3, 2))], [vi('y', 'float', (2, 2))])
    add(Case('violation__graph_v13_undefined_input_name', E, "node input 'nope' is produced by nothing", m,
             [{'inputs': [tensor(data, 'float', 'data')], 'outputs': [tensor(g, 'float', 'y')]}]))
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['g'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    add(Case('violation__graph_v13_output_not_produced', E, "graph output 'y' is produced by no node", m,
             [{'inputs': [tensor(data, 'float', 'data'), tensor(ind, 'int64', 'indices')], 'outputs': [tensor(g, 'float', 'y')]}]))
    m = make_model([H.make_node('Gather', ['data', ''], ['y'])],
                   [vi('data', 'float', (3, 2))], [vi('y', 'float', (2, 2))])
    add(Case('violation__gather_v13_indices_empty_name', E, "Gather's required input 'indices' given as '' (absent)", m,
             [{'inputs': [tensor(data, 'float', 'data')], 'outputs': [tensor(g, 'float', 'y')]}]))
    # input files are matched by position; their name field does not matter
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    add(Case('storage__gather_v13_input_names_differ_position_matters', P,
             'files matched by position (D15), the tensor names are ignored', m,
             [{'inputs': [tensor(data, 'float', 'indices'), tensor(ind, 'int64', '')], 'outputs': [tensor(g, 'float', 'zz')]}],
             firm=False))
    # graph output fed directly by a graph input and an initializer through Identity
    m = make_model([H.make_node('Identity', ['data'], ['y']), H.make_node('Identity', ['k'], ['z'])],
                   [vi('data', 'float', (3, 2))], [vi('y', 'float', (3, 2)), vi('z', 'int64', (2,))], inits=[tensor(ind, 'int64', 'k')])
    add(Case('storage__identity_v13_only_plumbing', P, 'Identity passes through; initializer feeds it (D15)', m,
             [{'inputs': [tensor(data, 'float', 'data')], 'outputs': [tensor(data, 'float', 'y'), tensor(ind, 'int64', 'z')]}]))
    # Constant with empty value_ints -> empty int64 indices
    node_case('storage', 'Gather', 13, 'constant_empty_value_ints',
              [Feed('data', rand_arr('float', (3, 2)), 'float'), Feed('indices', idx_arr([], 'int64', (0,)), 'int64', how='const_ints')],
              expect=P)
    # Constant value_float (scalar) as ScatterElements data is rank 0 -> errored
    node_case('violation', 'ScatterElements', 13, 'constant_value_float_rank0_data',
              [Feed('data', arr(1.5, 'float'), 'float', how='const_float'), Feed('indices', idx_arr(0, 'int64'), 'int64'),
               Feed('updates', arr(2.5, 'float'), 'float')], expect=E)
    # multiple data sets with different shapes (no declared dims)
    ds = []
    for shp, iv in (((3, 2), [2, 0]), ((5, 1), [4, 4, 0])):
        d_ = rand_arr('float', shp)
        i_ = idx_arr(iv, 'int64')
        ds.append({'inputs': [tensor(d_, 'float', 'data'), tensor(i_, 'int64', 'indices')],
                   'outputs': [tensor(ref_gather(d_, i_, 0), 'float', 'y')]})
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'float', None), vi('indices', 'int64', None)], [vi('y', 'float', None)])
    add(Case('storage__gather_v13_two_data_sets_different_shapes', P, 'graph declares no shapes', m, ds))
    # second data set has an OOB index -> whole case errored
    ds2 = [ds[0], {'inputs': [ds[0]['inputs'][0], tensor(idx_arr([3], 'int64'), 'int64', 'indices')],
                   'outputs': [tensor(ref_gather(rand_arr('float', (3, 2)), idx_arr([0], 'int64'), 0), 'float', 'y')]}]
    add(Case('violation__gather_v13_second_data_set_oob', E, 'test_data_set_1 index 3 out of range (D3)', m, ds2))

    more()
    more2()


def more():
    import onnx
    # zero-size tensors with enormous other dims: 0 elements, 0 bytes; nothing to allocate
    node_case('storage', 'Gather', 13, 'zero_size_data_huge_other_dim',
              [Feed('data', np.zeros((0, 1), np.float32), 'float'), Feed('indices', idx_arr([0, 0, 0, 0], 'int64'), 'int64')],
              {'axis': 1}, expect=P)
    c = CASES_LAST()
    for t in [c.datasets[0]['inputs'][0]]:
        del t.dims[:]
        t.dims.extend([0, 1 << 62])
    # expected output dims (0, 4) unchanged (computed from (0,1) data) and graph declares no data shape
    c.model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 1 << 62
    c.firm = False
    c.why = 'data dims [0, 2^62]: 0 elements, 0 bytes; output [0, 4] (D12 checked math must not reject or overflow)'
    c.ort = None
    node_case('storage', 'ScatterElements', 18, 'zero_size_data_huge_other_dim',
              [Feed('data', np.zeros((1, 0), np.float32), 'float'), Feed('indices', idx_arr([], 'int64', (0, 0)), 'int64'),
               Feed('updates', np.zeros((0, 0), np.float32), 'float')], {'reduction': 'add'}, expect=P)
    c = CASES_LAST()
    d = c.datasets[0]
    for t in (d['inputs'][0], d['outputs'][0]):
        del t.dims[:]
        t.dims.extend([1 << 62, 0])
    c.model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1 << 62
    c.model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 1 << 62
    c.firm = False
    c.why = 'data/output dims [2^62, 0]: empty, 0 bytes (D12)'
    c.ort = None
    node_case('valid', 'ScatterElements', 13, 'empty_data_axis_nonempty_indices_axis',
              [Feed('data', np.zeros((0, 3), np.float32), 'float'), Feed('indices', idx_arr([], 'int64', (2, 0)), 'int64'),
               Feed('updates', np.zeros((2, 0), np.float32), 'float')], expect=P)
    node_case('valid', 'GatherElements', 13, 'empty_both',
              [Feed('data', np.zeros((2, 0), np.float32), 'float'), Feed('indices', idx_arr([], 'int64', (2, 0)), 'int64')],
              {'axis': 1}, expect=P)
    node_case('violation', 'GatherElements', 13, 'indices_dim_gt_data_empty',
              [Feed('data', np.zeros((0, 3), np.float32), 'float'), Feed('indices', idx_arr([], 'int64', (0, 5)), 'int64')],
              expect=E)
    # axis given as INTS
    node_case('violation', 'GatherElements', 13, 'axis_ints_typed_attr',
              [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', idx_arr([[0, 1]], 'int64'), 'int64')],
              {'axis': [0]}, expect=E)
    # two outputs on a Gather node
    data = rand_arr('float', (3, 2))
    ind = idx_arr([2, 0], 'int64')
    g = ref_gather(data, ind, 0)
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y', 'y2'], name='my_gather')],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    add(Case('violation__gather_v13_two_node_outputs', E, 'Gather has exactly one output', m,
             [{'inputs': [tensor(data, 'float', 'data'), tensor(ind, 'int64', 'indices')], 'outputs': [tensor(g, 'float', 'y')]}]))
    # named node: reason should name it
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'], name='the_named_gather')],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    add(Case('violation__gather_v13_named_node_oob', E, 'index 3 out of range; reason should name the_named_gather', m,
             [{'inputs': [tensor(data, 'float', 'data'), tensor(idx_arr([3, 0], 'int64'), 'int64', 'indices')],
               'outputs': [tensor(g, 'float', 'y')]}]))
    # empty input file: parses as a TensorProto with data_type UNDEFINED
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    add(Case('malformed__gather_v13_empty_input_file', E, 'input_1.pb is 0 bytes: UNDEFINED dtype, rank 0 with no data', m,
             [{'inputs': [tensor(data, 'float', 'data'), b''], 'outputs': [tensor(g, 'float', 'y')]}]))
    add(Case('malformed__gather_v13_scalar_output_no_data', E, 'output_0.pb: rank-0 (1 element) without data', m,
             [{'inputs': [tensor(data, 'float', 'data'), tensor(ind, 'int64', 'indices')], 'outputs': [tensor(np.zeros(1, np.float32), 'float', 'y')]}]))
    t = CASES_LAST().datasets[0]['outputs'][0]
    t.ClearField('raw_data')
    del t.dims[:]
    # external plus raw_data
    from gen_storage import ext
    te, payload = ext(tensor(data, 'float', 'data'), 'data.bin', None, None)
    te.raw_data = payload
    add(Case('malformed__gather_v13_external_and_raw_data', E, 'data_location EXTERNAL and raw_data both set', m,
             [{'inputs': [te, tensor(ind, 'int64', 'indices')], 'outputs': [tensor(g, 'float', 'y')]}],
             [('file', 'test_data_set_0/data.bin', payload)], firm=False))
    # unknown protobuf fields (field 99, varint) appended to model and tensor files: protobuf ignores them
    unk = bytes([0x98, 0x06, 0x01])  # field 99, wire type 0, value 1
    add(Case('storage__gather_v13_unknown_protobuf_fields', P, 'unknown protobuf fields are ignored by proto parsers',
             m.SerializeToString() + unk,
             [{'inputs': [tensor(data, 'float', 'data').SerializeToString() + unk, tensor(ind, 'int64', 'indices')],
               'outputs': [tensor(g, 'float', 'y').SerializeToString() + unk]}], firm=False))


def CASES_LAST():
    import casekit
    return casekit.CASES[-1]


def more2():
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'bool', (3,)), vi('indices', 'int64', (3,))], [vi('y', 'bool', (3,))])
    ind = idx_arr([0, 1, 2], 'int64')
    t = TP(); t.name = 'data'; t.data_type = TP.BOOL; t.dims.extend([3]); t.raw_data = bytes([2, 0, 255])
    add(Case('storage__gather_v13_bool_raw_byte_2_reads_true', P, 'section 8: raw byte 0x02 reads as true (observed numpy_helper behaviour)', m,
             [{'inputs': [t, tensor(ind, 'int64', 'indices')], 'outputs': [tensor(np.array([True, False, True]), 'bool', 'y')]}], firm=False))
    t = TP(); t.name = 'data'; t.data_type = TP.BOOL; t.dims.extend([3]); t.int32_data.extend([2, 0, -1])
    add(Case('storage__gather_v13_bool_int32_data_2_reads_true', P, 'section 8: any nonzero int32_data entry reads as true', m,
             [{'inputs': [t, tensor(ind, 'int64', 'indices')], 'outputs': [tensor(np.array([True, False, True]), 'bool', 'y')]}], firm=False))
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (0,))], [vi('y', 'float', (0, 2))])
    t = TP(); t.name = 'indices'; t.data_type = TP.INT64; t.dims.extend([0]); t.raw_data = b''
    o = TP(); o.name = 'y'; o.data_type = TP.FLOAT; o.dims.extend([0, 2]); o.raw_data = b''
    add(Case('storage__gather_v13_empty_tensor_with_empty_raw_data_present', P, 'zero-size tensor whose raw_data is present but empty (exact size 0)', m,
             [{'inputs': [tensor(rand_arr('float', (3, 2)), 'float', 'data'), t], 'outputs': [o]}], firm=False))

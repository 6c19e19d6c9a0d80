"""Category 3: tampered expected outputs (D9)."""
import numpy as np
from onnx import helper as H
from lib import arr, tensor, vi, make_model, ref_gather, npdt
from casekit import Feed, node_case, add, Case
from gen_valid import rand_arr, idx_arr

F = 'failed'
P = 'passed'


def change_one(out, dt):
    o = out.copy()
    flat = o.reshape(-1)
    i = flat.size // 2
    if dt == 'bool':
        flat[i] = not flat[i]
    elif dt == 'string':
        flat[i] = flat[i] + b'!'
    elif dt in ('complex64', 'complex128'):
        flat[i] = flat[i] + 1j
    elif dt in ('float16', 'float', 'double', 'bfloat16'):
        flat[i] = flat[i] + npdt(dt).type(1) if not np.isnan(float(np.real(flat[i]))) else npdt(dt).type(0)
    else:
        v = int(flat[i])
        info = np.iinfo(npdt(dt))
        flat[i] = v + 1 if v < info.max else v - 1
    return tensor(o, dt, 'y'), F, 'one element changed (D9)'


def build():
    g_dts = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
             'float16', 'float', 'double', 'string', 'complex64', 'complex128', 'bfloat16']
    for dt in g_dts:
        node_case('tampered', 'Gather', 13, 'one_element_%s' % dt,
                  [Feed('data', rand_arr(dt, (4, 3)), dt), Feed('indices', idx_arr([[0, 3], [2, 1]], 'int64'), 'int64')],
                  tamper=change_one)
    node_case('tampered', 'GatherElements', 11, 'one_element_float',
              [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64')],
              tamper=change_one)
    node_case('tampered', 'ScatterElements', 18, 'one_element_int32',
              [Feed('data', rand_arr('int32', (3, 3)), 'int32'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
               Feed('updates', rand_arr('int32', (1, 3)), 'int32')], tamper=change_one)
    node_case('tampered', 'Scatter', 9, 'one_element_string',
              [Feed('data', rand_arr('string', (3, 3)), 'string'), Feed('indices', idx_arr([[0, 1, 2]], 'int64'), 'int64'),
               Feed('updates', rand_arr('string', (1, 3)), 'string')], tamper=change_one)
    # integer reduction: exact even though it is a reduction
    node_case('tampered', 'ScatterElements', 16, 'int_reduction_off_by_one',
              [Feed('data', arr([10, 20], 'int64'), 'int64'), Feed('indices', idx_arr([0, 0], 'int64'), 'int64'),
               Feed('updates', arr([1, 2], 'int64'), 'int64')], {'reduction': 'add'},
              tamper=lambda o, dt: (tensor(arr([14, 20], 'int64'), 'int64', 'y'), F, 'integers compare exactly (D9)'))
    # shape changed
    fdata = rand_arr('float', (4, 3))
    fidx = idx_arr([0, 3], 'int64')
    node_case('tampered', 'Gather', 13, 'shape_reshaped_same_numel',
              [Feed('data', fdata, 'float'), Feed('indices', fidx, 'int64')],
              tamper=lambda o, dt: (tensor(o.reshape(3, 2), dt, 'y'), F, 'shape differs (D9)'))
    node_case('tampered', 'Gather', 13, 'shape_extra_unit_dim',
              [Feed('data', fdata, 'float'), Feed('indices', fidx, 'int64')],
              tamper=lambda o, dt: (tensor(o.reshape(1, 2, 3), dt, 'y'), F, 'shape differs (D9)'))
    node_case('tampered', 'Gather', 13, 'rank0_vs_shape1',
              [Feed('data', arr([1, 2, 3], 'float'), 'float'), Feed('indices', idx_arr(1, 'int64'), 'int64')],
              tamper=lambda o, dt: (tensor(o.reshape(1), dt, 'y'), F, 'rank-0 is not [1] (D9)'))
    node_case('tampered', 'Gather', 13, 'shape1_vs_rank0',
              [Feed('data', arr([1, 2, 3], 'float'), 'float'), Feed('indices', idx_arr([1], 'int64'), 'int64')],
              tamper=lambda o, dt: (tensor(o.reshape(()), dt, 'y'), F, 'rank-0 is not [1] (D9)'))
    node_case('tampered', 'Gather', 13, 'empty_shape_differs',
              [Feed('data', fdata, 'float'), Feed('indices', idx_arr([], 'int64', (0,)), 'int64')],
              tamper=lambda o, dt: (tensor(np.zeros((3, 0), np.float32), dt, 'y'), F, 'shape (0,3) vs (3,0) (D9)'))
    # dtype changed
    node_case('tampered', 'Gather', 13, 'dtype_int64_vs_int32',
              [Feed('data', rand_arr('int64', (4, 3)), 'int64'), Feed('indices', fidx, 'int64')],
              tamper=lambda o, dt: (tensor(o.astype(np.int32), 'int32', 'y'), F, 'dtype differs (D9)'))
    node_case('tampered', 'Gather', 13, 'dtype_float_vs_double',
              [Feed('data', fdata, 'float'), Feed('indices', fidx, 'int64')],
              tamper=lambda o, dt: (tensor(o.astype(np.float64), 'double', 'y'), F, 'dtype differs (D9)'))
    node_case('tampered', 'Gather', 13, 'dtype_uint8_vs_bool',
              [Feed('data', arr([1, 0, 1], 'uint8'), 'uint8'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64')],
              tamper=lambda o, dt: (tensor(o.astype(bool), 'bool', 'y'), F, 'dtype differs (D9)'))
    node_case('tampered', 'Gather', 13, 'dtype_float16_vs_bfloat16',
              [Feed('data', arr([1, 2, 3], 'float16'), 'float16'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64')],
              tamper=lambda o, dt: (tensor(arr(o.astype(np.float32), 'bfloat16'), 'bfloat16', 'y'), F, 'dtype differs (D9)'))
    node_case('tampered', 'Gather', 13, 'dtype_empty_float_vs_double',
              [Feed('data', fdata, 'float'), Feed('indices', idx_arr([], 'int64', (0,)), 'int64')],
              tamper=lambda o, dt: (tensor(np.zeros((0, 3)), 'double', 'y'), F, 'dtype differs even when empty (D9)'))
    # NaN vs number, -0.0 vs +0.0 (data movement = exact)
    sp = arr([np.nan, -0.0, 0.0, 1.0], 'float')
    i4 = idx_arr([0, 1, 2, 3], 'int64')

    def setv(i, v, st, why, dt_='float'):
        def f(o, dt):
            o = o.copy()
            o[i] = v
            return tensor(o, dt, 'y'), st, why
        return f
    node_case('tampered', 'Gather', 13, 'expected_number_actual_nan',
              [Feed('data', sp, 'float'), Feed('indices', i4, 'int64')], tamper=setv(0, 0.0, F, 'NaN vs number (D9)'))
    node_case('tampered', 'Gather', 13, 'expected_nan_actual_number',
              [Feed('data', sp, 'float'), Feed('indices', i4, 'int64')], tamper=setv(3, np.nan, F, 'NaN vs number (D9)'))
    node_case('tampered', 'Gather', 13, 'minus_zero_vs_plus_zero',
              [Feed('data', sp, 'float'), Feed('indices', i4, 'int64')], tamper=setv(1, 0.0, F, '-0.0 vs +0.0 differ on data movement (D9)'))
    node_case('tampered', 'Gather', 13, 'plus_zero_vs_minus_zero',
              [Feed('data', sp, 'float'), Feed('indices', i4, 'int64')], tamper=setv(2, -0.0, F, '+0.0 vs -0.0 differ on data movement (D9)'))
    node_case('tampered', 'ScatterElements', 13, 'minus_zero_vs_plus_zero_scatter_none',
              [Feed('data', arr([1, 2], 'double'), 'double'), Feed('indices', idx_arr([1], 'int64'), 'int64'),
               Feed('updates', arr([-0.0], 'double'), 'double')],
              tamper=setv(1, 0.0, F, '-0.0 vs +0.0 differ on data movement (D9)'))
    node_case('tampered', 'Gather', 13, 'float16_minus_zero_vs_plus_zero',
              [Feed('data', arr([-0.0, 1], 'float16'), 'float16'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, 0.0, F, '-0.0 vs +0.0 differ on data movement (D9)'))
    node_case('tampered', 'Gather', 13, 'one_ulp_data_movement',
              [Feed('data', arr([1.0, 2.0], 'float'), 'float'), Feed('indices', idx_arr([1], 'int64'), 'int64')],
              tamper=setv(0, np.nextafter(np.float32(2.0), np.float32(3.0)), F, 'data movement is exact (D9)'))
    node_case('tampered', 'Gather', 13, 'complex_minus_zero_imag',
              [Feed('data', arr([1 + 0j], 'complex64'), 'complex64'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=setv(0, complex(1, -0.0), F, '-0.0 vs +0.0 differ on data movement (D9)'))
    # NaN with different payload / sign: any NaN equals any NaN -> passed
    payload = np.array([0x7fc00001, 0x3f800000], dtype=np.uint32).view(np.float32)

    def other_nan(o, dt):
        o = o.copy().view(np.uint32)
        o[0] = 0xffc12345
        return tensor(o.view(np.float32), 'float', 'y'), P, 'any NaN equals any NaN (D9)'
    node_case('tampered', 'Gather', 13, 'nan_payload_differs_passes',
              [Feed('data', payload, 'float'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64')], tamper=other_nan)

    def other_nan16(o, dt):
        o = o.copy().view(np.uint16)
        o[0] = 0xfe01
        return tensor(o.view(np.float16), 'float16', 'y'), P, 'any NaN equals any NaN (D9)'
    node_case('tampered', 'Gather', 13, 'float16_nan_payload_differs_passes',
              [Feed('data', arr([np.nan, 1], 'float16'), 'float16'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64')],
              tamper=other_nan16)
    # reductions: tolerance rtol 1e-3, atol 1e-7
    red_feeds = lambda dt: [Feed('data', arr([1.0, 2.0, 100.0], dt), dt), Feed('indices', idx_arr([0, 0, 2], 'int64'), 'int64'),
                            Feed('updates', arr([0.5, 0.25, 0.5], dt), dt)]
    for dt, opset, red in (('float', 16, 'add'), ('double', 18, 'add'), ('float', 18, 'mul'), ('float', 18, 'max')):
        def scale(k, st, why):
            def f(o, d_):
                o = o.copy()
                o[0] = o[0] * (1 + k)
                return tensor(o, d_, 'y'), st, why
            return f
        node_case('tampered', 'ScatterElements', opset, 'reduction_%s_%s_within_tolerance' % (red, dt), red_feeds(dt),
                  {'reduction': red}, tamper=scale(5e-4, P, 'rel diff 5e-4 <= rtol 1e-3 (D9)'))
        node_case('tampered', 'ScatterElements', opset, 'reduction_%s_%s_outside_tolerance' % (red, dt), red_feeds(dt),
                  {'reduction': red}, tamper=scale(5e-3, F, 'rel diff 5e-3 > rtol 1e-3 (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_float16_one_ulp_within_tolerance',
              [Feed('data', arr([0.5], 'float16'), 'float16'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0.5], 'float16'), 'float16')], {'reduction': 'add'},
              tamper=setv(0, np.nextafter(np.float16(1.0), np.float16(2.0)), P, '|diff| 9.77e-4 <= 1e-7 + 1e-3*1 (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_float16_two_ulp_outside_tolerance',
              [Feed('data', arr([0.5], 'float16'), 'float16'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0.5], 'float16'), 'float16')], {'reduction': 'add'},
              tamper=setv(0, 1.001953125, F, '|diff| 1.95e-3 > 1e-3 (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_bfloat16_outside_tolerance',
              [Feed('data', arr([0.5], 'bfloat16'), 'bfloat16'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0.5], 'bfloat16'), 'bfloat16')], {'reduction': 'add'},
              tamper=setv(0, 1.0078125, F, '|diff| 7.8e-3 > 1e-3 (D9)'))
    node_case('tampered', 'ScatterElements', 16, 'reduction_minus_zero_vs_plus_zero_passes',
              [Feed('data', arr([-0.0, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([-0.0], 'float'), 'float')], {'reduction': 'add'},
              tamper=setv(0, 0.0, P, 'tolerant comparison: |-0 - +0| = 0 (D9)'))
    node_case('tampered', 'ScatterElements', 16, 'reduction_tiny_absolute_within_atol',
              [Feed('data', arr([0.0, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0.0], 'float'), 'float')], {'reduction': 'add'},
              tamper=setv(0, 5e-8, P, '|diff| 5e-8 <= atol 1e-7 (D9)'))
    node_case('tampered', 'ScatterElements', 16, 'reduction_tiny_absolute_outside_atol',
              [Feed('data', arr([0.0, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([0.0], 'float'), 'float')], {'reduction': 'add'},
              tamper=setv(0, 3e-7, F, '|diff| 3e-7 > atol 1e-7 (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_inf_vs_minus_inf',
              [Feed('data', arr([1.0, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([np.inf], 'float'), 'float')], {'reduction': 'add'},
              tamper=setv(0, -np.inf, F, 'infinities equal only with the same sign (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_inf_vs_large_finite',
              [Feed('data', arr([1.0, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([np.inf], 'float'), 'float')], {'reduction': 'add'},
              tamper=setv(0, 3.4e38, F, 'inf vs finite (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_nan_vs_nan_passes',
              [Feed('data', arr([np.nan, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([3.0], 'float'), 'float')], {'reduction': 'max'},
              tamper=lambda o, dt: (tensor(np.array([0xffc00001, 0x3f800000], np.uint32).view(np.float32), 'float', 'y'), P,
                                    'NaN equals NaN (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_nan_max_expected_ort_style',
              [Feed('data', arr([np.nan, 1.0], 'float'), 'float'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([5.0], 'float'), 'float')], {'reduction': 'max'},
              tamper=setv(0, 5.0, F, 'max must propagate NaN (D8); ORT would give 5'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_complex_outside_tolerance',
              [Feed('data', arr([1 + 1j], 'complex64'), 'complex64'), Feed('indices', idx_arr([0], 'int64'), 'int64'),
               Feed('updates', arr([2 + 0j], 'complex64'), 'complex64')], {'reduction': 'mul'},
              tamper=setv(0, 2 + 2.1j, F, 'imag part off by 5% (D9)'))
    node_case('tampered', 'ScatterElements', 18, 'reduction_string_add_differs',
              [Feed('data', arr(['a', 'b'], 'string'), 'string'), Feed('indices', idx_arr([0, 0], 'int64'), 'int64'),
               Feed('updates', arr(['x', 'y'], 'string'), 'string')], {'reduction': 'add'},
              tamper=lambda o, dt: (tensor(arr(['ayx', 'b'], 'string'), 'string', 'y'), F, 'order of concatenation (D8)'))
    node_case('tampered', 'Gather', 13, 'string_nfc_vs_nfd',
              [Feed('data', arr(['é'], 'string'), 'string'), Feed('indices', idx_arr([0], 'int64'), 'int64')],
              tamper=lambda o, dt: (tensor(arr(['e\u0301'], 'string'), 'string', 'y'), F, 'strings compare as bytes (D9)'))
    node_case('tampered', 'ScatterElements', 13, 'duplicates_first_write_expected',
              [Feed('data', arr([0, 0], 'float'), 'float'), Feed('indices', idx_arr([1, 1], 'int64'), 'int64'),
               Feed('updates', arr([1, 2], 'float'), 'float')],
              tamper=lambda o, dt: (tensor(arr([0, 1], 'float'), 'float', 'y'), F, 'last write wins (D7)'))
    # second data set tampered
    d0 = rand_arr('float', (3, 2))
    i0 = idx_arr([2, 0], 'int64')
    o0 = ref_gather(d0, i0, 0)
    bad = o0.copy()
    bad[0, 0] += 1
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 2))])
    ds = [{'inputs': [tensor(d0, 'float', 'data'), tensor(i0, 'int64', 'indices')], 'outputs': [tensor(o0, 'float', 'y')]},
          {'inputs': [tensor(d0, 'float', 'data'), tensor(i0, 'int64', 'indices')], 'outputs': [tensor(bad, 'float', 'y')]}]
    add(Case('tampered__gather_v13_second_data_set_wrong', 'failed', 'test_data_set_1 differs (D9)', m, ds))
    # second of two outputs wrong
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y']), H.make_node('Identity', ['y'], ['y2'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,))],
                   [vi('y', 'float', (2, 2)), vi('y2', 'float', (2, 2))])
    add(Case('tampered__gather_v13_second_output_wrong', 'failed', 'output_1 differs (D9, D15)', m,
             [{'inputs': [tensor(d0, 'float', 'data'), tensor(i0, 'int64', 'indices')],
               'outputs': [tensor(o0, 'float', 'y'), tensor(bad, 'float', 'y2')]}]))
    # outputs swapped (compared by position)
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y']),
                    H.make_node('Gather', ['data', 'indices2'], ['z'])],
                   [vi('data', 'float', (3, 2)), vi('indices', 'int64', (2,)), vi('indices2', 'int64', (2,))],
                   [vi('y', 'float', (2, 2)), vi('z', 'float', (2, 2))])
    i1 = idx_arr([1, 1], 'int64')
    o1 = ref_gather(d0, i1, 0)
    add(Case('tampered__gather_v13_outputs_swapped_by_position', 'failed', 'outputs compared by position (D15)', m,
             [{'inputs': [tensor(d0, 'float', 'data'), tensor(i0, 'int64', 'indices'), tensor(i1, 'int64', 'indices2')],
               'outputs': [tensor(o1, 'float', 'z'), tensor(o0, 'float', 'y')]}]))

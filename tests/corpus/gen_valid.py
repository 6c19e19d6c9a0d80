"""Category 1: valid cases (expected: passed)."""
import numpy as np
from lib import (arr, npdt, CLASSIC15, INTS, FLOATS, COMPLEX, kernel_version, BF16)
from casekit import Feed, node_case

rng = np.random.default_rng(20240611)


def rand_vals(dt, n, special=False):
    if dt == 'bool':
        return rng.integers(0, 2, n).astype(bool)
    if dt in INTS:
        info = np.iinfo(npdt(dt))
        lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
        v = [int(x) for x in rng.integers(lo, hi + 1, n)]
        if n >= 3:
            v[0], v[1] = int(info.max), int(info.min)
        return np.array(v, dtype=npdt(dt))
    if dt in FLOATS:
        v = (rng.integers(-400, 400, n) / 8.0).astype(np.float64)
        if special and n >= 3:
            v[0], v[1], v[2] = np.nan, -0.0, np.inf
        return v.astype(npdt(dt))
    if dt in COMPLEX:
        return ((rng.integers(-50, 50, n) + 1j * rng.integers(-50, 50, n)) / 4).astype(npdt(dt))
    if dt == 'string':
        pool = ['', 'a', 'bc', 'héllo', '日本', 'x' * 17, 'z\x00z']
        return arr([pool[int(i)] + str(j) if j % 3 else pool[int(i)] for j, i in
                    enumerate(rng.integers(0, len(pool), n))], 'string')
    raise ValueError(dt)


def rand_arr(dt, shape, special=False):
    n = int(np.prod(shape)) if len(shape) else 1
    return rand_vals(dt, n, special).reshape(shape)


def idx_arr(vals, idt, shape=None):
    a = np.array(vals, dtype=np.int64)
    if shape is not None:
        a = a.reshape(shape)
    return a.astype(np.int32 if idt == 'int32' else np.int64)


def rand_case(op, opset, dt, serial):
    kv = kernel_version(op, opset)
    r = 1 + serial % 4
    shape = tuple(int(x) for x in rng.integers(1, 5 if r < 4 else 4, r))
    axis = int(rng.integers(-r, r))
    a = axis + r if axis < 0 else axis
    s = shape[a]
    idt = 'int32' if serial % 2 else 'int64'
    allow_neg = not (op == 'Scatter' or (op == 'Gather' and kv < 11))
    lo = -s if allow_neg else 0
    data = rand_arr(dt, shape, special=(serial % 3 == 0))
    if op == 'Gather':
        q = int(rng.integers(0, 3))
        ishape = tuple(int(x) for x in rng.integers(1, 4, q))
    else:
        ishape = tuple(int(rng.integers(1, 5)) if d == a else int(rng.integers(1, shape[d] + 1))
                       for d in range(r))
    iv = rng.integers(lo, s, ishape)
    if allow_neg and iv.size:
        iv.reshape(-1)[0] = -1
    idx = idx_arr(iv, idt)
    feeds = [Feed('data', data, dt), Feed('indices', idx, idt)]
    if op in ('ScatterElements', 'Scatter'):
        feeds.append(Feed('updates', rand_arr(dt, ishape), dt))
    what = '%s_r%d_axis%d_%s%s' % (dt, r, axis, idt, '_q%d' % len(ishape) if op == 'Gather' else '')
    node_case('valid', op, opset, what, feeds, {'axis': axis}, expect='passed')


def build():
    serial = 0
    sweep = [('Gather', 1), ('Gather', 11), ('Gather', 13), ('GatherElements', 11),
             ('GatherElements', 13), ('ScatterElements', 11), ('ScatterElements', 13),
             ('ScatterElements', 16), ('ScatterElements', 18), ('Scatter', 9), ('Scatter', 10)]
    for op, opset in sweep:
        dts = list(CLASSIC15)
        if op != 'Scatter' and kernel_version(op, opset) >= 13:
            dts.append('bfloat16')
        for dt in dts:
            rand_case(op, opset, dt, serial)
            serial += 1
    # intermediate opsets resolve to the right kernel version
    extra = [('Gather', 7), ('Gather', 10), ('Gather', 12), ('Gather', 18), ('Gather', 22),
             ('GatherElements', 12), ('GatherElements', 18), ('GatherElements', 22),
             ('ScatterElements', 12), ('ScatterElements', 15), ('ScatterElements', 17),
             ('ScatterElements', 22)]
    for op, opset in extra:
        for dt in ('float', 'int64', 'string'):
            rand_case(op, opset, dt, serial)
            serial += 1

    f32 = lambda v, s=None: arr(v, 'float', s)
    # ---- Gather specials
    for opset in (1, 11, 13):
        node_case('valid', 'Gather', opset, 'scalar_index_rank0_output',
                  [Feed('data', f32([1.5, 2.5, 3.5]), 'float'), Feed('indices', idx_arr(2, 'int64'), 'int64')],
                  expect='passed')
        node_case('valid', 'Gather', opset, 'scalar_index_rank3_axis1',
                  [Feed('data', rand_arr('int32', (2, 3, 4)), 'int32'),
                   Feed('indices', idx_arr(1, 'int32'), 'int32')], {'axis': 1}, expect='passed')
        node_case('valid', 'Gather', opset, 'empty_indices_0',
                  [Feed('data', rand_arr('float', (3, 4)), 'float'),
                   Feed('indices', idx_arr([], 'int64', (0,)), 'int64')], expect='passed')
        node_case('valid', 'Gather', opset, 'empty_indices_2x0_axis1',
                  [Feed('data', rand_arr('float', (3, 4)), 'float'),
                   Feed('indices', idx_arr([], 'int32', (2, 0)), 'int32')], {'axis': 1}, expect='passed')
        node_case('valid', 'Gather', opset, 'zero_size_data_dim_off_axis',
                  [Feed('data', rand_arr('double', (3, 0)), 'double'),
                   Feed('indices', idx_arr([0, 2, 2], 'int64'), 'int64')], expect='passed')
        node_case('valid', 'Gather', opset, 'zero_size_axis_empty_indices',
                  [Feed('data', rand_arr('float', (0, 3)), 'float'),
                   Feed('indices', idx_arr([], 'int64', (0,)), 'int64')], expect='passed')
        node_case('valid', 'Gather', opset, 'duplicate_indices_rank4_axisneg2',
                  [Feed('data', rand_arr('uint16', (2, 3, 2, 3)), 'uint16'),
                   Feed('indices', idx_arr([[1, 1], [0, 1]], 'int64'), 'int64')], {'axis': -2},
                  expect='passed')
        node_case('valid', 'Gather', opset, 'max_index',
                  [Feed('data', rand_arr('int8', (5, 2)), 'int8'),
                   Feed('indices', idx_arr([4, 0, 4], 'int32'), 'int32')], expect='passed')
    for opset in (11, 13):
        node_case('valid', 'Gather', opset, 'negative_scalar_index',
                  [Feed('data', f32([1, 2, 3, 4]), 'float'), Feed('indices', idx_arr(-4, 'int64'), 'int64')],
                  expect='passed')
        node_case('valid', 'Gather', opset, 'negative_indices_axis1_int32',
                  [Feed('data', rand_arr('float', (3, 4)), 'float'),
                   Feed('indices', idx_arr([[-1, -4], [0, 3]], 'int32'), 'int32')], {'axis': 1},
                  expect='passed')
    node_case('valid', 'Gather', 13, 'bfloat16_negative_indices',
              [Feed('data', rand_arr('bfloat16', (4, 2)), 'bfloat16'),
               Feed('indices', idx_arr([-1, -4, 2], 'int64'), 'int64')], expect='passed')
    node_case('valid', 'Gather', 13, 'special_floats_exact',
              [Feed('data', f32([np.nan, -0.0, np.inf, -np.inf, 1e-45]), 'float'),
               Feed('indices', idx_arr([4, 3, 2, 1, 0, 1], 'int64'), 'int64')], expect='passed')
    node_case('valid', 'Gather', 13, 'large_2000x50',
              [Feed('data', rand_arr('float', (2000, 50)), 'float'),
               Feed('indices', idx_arr(rng.integers(-2000, 2000, (300, 2)), 'int64'), 'int64')],
              expect='passed')

    # ---- GatherElements specials
    for opset in (11, 13):
        node_case('valid', 'GatherElements', opset, 'indices_longer_on_axis',
                  [Feed('data', rand_arr('float', (3, 4)), 'float'),
                   Feed('indices', idx_arr(rng.integers(-4, 4, (3, 6)), 'int64'), 'int64')], {'axis': 1},
                  expect='passed')
        node_case('valid', 'GatherElements', opset, 'indices_smaller_off_axis',
                  [Feed('data', rand_arr('int32', (3, 4)), 'int32'),
                   Feed('indices', idx_arr([[0, 3], [-1, 1]], 'int32'), 'int32')], {'axis': 1},
                  expect='passed')
        node_case('valid', 'GatherElements', opset, 'indices_smaller_off_axis_axisneg1',
                  [Feed('data', rand_arr('int32', (3, 4)), 'int32'),
                   Feed('indices', idx_arr([[0, 3], [-1, 1]], 'int64'), 'int64')], {'axis': -1},
                  expect='passed')
        node_case('valid', 'GatherElements', opset, 'empty_indices_3x0',
                  [Feed('data', rand_arr('float', (3, 4)), 'float'),
                   Feed('indices', idx_arr([], 'int64', (3, 0)), 'int64')], {'axis': 1}, expect='passed')
        node_case('valid', 'GatherElements', opset, 'empty_indices_0x4',
                  [Feed('data', rand_arr('string', (3, 4)), 'string'),
                   Feed('indices', idx_arr([], 'int32', (0, 4)), 'int32')], {'axis': 0}, expect='passed')
        node_case('valid', 'GatherElements', opset, 'zero_size_data',
                  [Feed('data', rand_arr('float', (0, 4)), 'float'),
                   Feed('indices', idx_arr([], 'int64', (0, 2)), 'int64')], {'axis': 1}, expect='passed')
        node_case('valid', 'GatherElements', opset, 'rank1_negative',
                  [Feed('data', rand_arr('uint64', (5,)), 'uint64'),
                   Feed('indices', idx_arr([-5, 4, -1, 0], 'int64'), 'int64')], expect='passed')

    # ---- ScatterElements / Scatter specials
    se_versions = [11, 13, 16, 18]
    for opset in se_versions:
        node_case('valid', 'ScatterElements', opset, 'duplicates_last_wins',
                  [Feed('data', f32(np.zeros((3, 3))), 'float'),
                   Feed('indices', idx_arr([[1, 1, 1], [1, 0, 1], [1, 1, 1]], 'int64'), 'int64'),
                   Feed('updates', f32(np.arange(1, 10).reshape(3, 3)), 'float')], expect='passed')
        node_case('valid', 'ScatterElements', opset, 'duplicates_negative_axis1',
                  [Feed('data', rand_arr('int16', (2, 4)), 'int16'),
                   Feed('indices', idx_arr([[-1, 3, 0], [2, -2, 2]], 'int32'), 'int32'),
                   Feed('updates', rand_arr('int16', (2, 3)), 'int16')], {'axis': -1}, expect='passed')
        node_case('valid', 'ScatterElements', opset, 'empty_indices',
                  [Feed('data', rand_arr('float', (3, 4)), 'float'),
                   Feed('indices', idx_arr([], 'int64', (0, 4)), 'int64'),
                   Feed('updates', rand_arr('float', (0, 4)), 'float')], expect='passed')
        node_case('valid', 'ScatterElements', opset, 'zero_size_data',
                  [Feed('data', rand_arr('float', (0, 3)), 'float'),
                   Feed('indices', idx_arr([], 'int64', (0, 3)), 'int64'),
                   Feed('updates', rand_arr('float', (0, 3)), 'float')], expect='passed')
        node_case('valid', 'ScatterElements', opset, 'indices_longer_on_axis',
                  [Feed('data', rand_arr('int64', (2, 3)), 'int64'),
                   Feed('indices', idx_arr([[0, 1, 2, 0, 1], [2, 2, 2, 1, 0]], 'int64'), 'int64'),
                   Feed('updates', rand_arr('int64', (2, 5)), 'int64')], {'axis': 1}, expect='passed')
        node_case('valid', 'ScatterElements', opset, 'indices_smaller_off_axis_rank3',
                  [Feed('data', rand_arr('double', (3, 4, 2)), 'double'),
                   Feed('indices', idx_arr([[[0], [-3]]], 'int32'), 'int32'),
                   Feed('updates', rand_arr('double', (1, 2, 1)), 'double')], {'axis': 1}, expect='passed')
        node_case('valid', 'ScatterElements', opset, 'special_floats_exact',
                  [Feed('data', f32([1, 2, 3, 4]), 'float'),
                   Feed('indices', idx_arr([0, 1, 3], 'int64'), 'int64'),
                   Feed('updates', f32([np.nan, -0.0, -np.inf]), 'float')], expect='passed')
    for opset in (9, 10):
        node_case('valid', 'Scatter', opset, 'duplicates_last_wins',
                  [Feed('data', f32(np.zeros((3, 3))), 'float'),
                   Feed('indices', idx_arr([[1, 0, 2], [1, 0, 2]], 'int64'), 'int64'),
                   Feed('updates', f32([[1, 2, 3], [4, 5, 6]]), 'float')], expect='passed')
        node_case('valid', 'Scatter', opset, 'no_axis_attr_default0',
                  [Feed('data', rand_arr('int32', (3, 3)), 'int32'),
                   Feed('indices', idx_arr([[2, 0, 1]], 'int32'), 'int32'),
                   Feed('updates', rand_arr('int32', (1, 3)), 'int32')], expect='passed')
        node_case('valid', 'Scatter', opset, 'empty_indices',
                  [Feed('data', rand_arr('string', (2, 2)), 'string'),
                   Feed('indices', idx_arr([], 'int64', (2, 0)), 'int64'),
                   Feed('updates', rand_arr('string', (2, 0)), 'string')], {'axis': 1}, expect='passed')
        node_case('valid', 'Scatter', opset, 'axis_neg1_indices_longer_on_axis',
                  [Feed('data', rand_arr('uint8', (2, 2)), 'uint8'),
                   Feed('indices', idx_arr([[1, 0, 1]], 'int64'), 'int64'),
                   Feed('updates', rand_arr('uint8', (1, 3)), 'uint8')], {'axis': -1}, expect='passed')

    # ---- reductions (D8): every reduction allowed by the version, over every supported dtype
    red_dtypes = INTS + ['float16', 'float', 'double', 'bfloat16', 'bool', 'string'] + COMPLEX
    idx = idx_arr([[1, 0, 2], [1, 2, 2], [-2, 0, 2]], 'int64')
    for opset, reds in ((16, ['add', 'mul']), (18, ['add', 'mul', 'max', 'min'])):
        for red in reds:
            for dt in red_dtypes:
                if dt == 'string' and red != 'add':
                    continue   # skipped category
                if dt in ('bool',) + tuple(COMPLEX) and red in ('max', 'min'):
                    continue   # skipped category
                if dt == 'string':
                    data = arr(['a', 'b', 'c', 'd', 'é', 'f', '', 'h', 'i'], 'string', (3, 3))
                    upd = arr(['x', 'y', 'z', '1', '2', '3', 'p', 'q', 'r'], 'string', (3, 3))
                elif dt == 'bool':
                    data = arr([1, 0, 1, 0, 1, 0, 1, 1, 0], 'bool', (3, 3))
                    upd = arr([1, 1, 0, 0, 0, 1, 1, 0, 1], 'bool', (3, 3))
                elif dt in INTS:
                    lo = 0 if dt.startswith('u') else -5
                    data = arr(rng.integers(lo, 6, (3, 3)), dt)
                    upd = arr(rng.integers(lo, 6, (3, 3)), dt)
                elif dt in COMPLEX:
                    data = arr((rng.integers(-4, 5, (3, 3)) + 1j * rng.integers(-4, 5, (3, 3))) / 2, dt)
                    upd = arr((rng.integers(-4, 5, (3, 3)) + 1j * rng.integers(-4, 5, (3, 3))) / 2, dt)
                else:
                    data = arr(rng.integers(-16, 17, (3, 3)) / 4, dt)
                    upd = arr(rng.integers(-16, 17, (3, 3)) / 4, dt)
                axis = 0 if dt not in ('int32', 'float', 'string') else -2
                node_case('valid', 'ScatterElements', opset, 'reduction_%s_%s' % (red, dt),
                          [Feed('data', data, dt), Feed('indices', idx, 'int64'), Feed('updates', upd, dt)],
                          {'axis': axis, 'reduction': red}, expect='passed')
        # axis 1, rank 3, int32 indices, negative
        node_case('valid', 'ScatterElements', opset, 'reduction_add_rank3_axis1_float',
                  [Feed('data', arr(rng.integers(-8, 8, (2, 3, 2)) / 2, 'float'), 'float'),
                   Feed('indices', idx_arr([[[0, -1], [0, 2], [-3, 1]], [[2, 2], [2, 2], [1, 1]]], 'int32'), 'int32'),
                   Feed('updates', arr(rng.integers(-8, 8, (2, 3, 2)) / 2, 'float'), 'float')],
                  {'axis': 1, 'reduction': 'add'}, expect='passed')
        node_case('valid', 'ScatterElements', opset, 'reduction_none_explicit',
                  [Feed('data', rand_arr('float', (3, 3)), 'float'), Feed('indices', idx, 'int64'),
                   Feed('updates', rand_arr('float', (3, 3)), 'float')],
                  {'reduction': 'none'}, expect='passed')
        node_case('valid', 'ScatterElements', opset, 'reduction_mul_empty_indices',
                  [Feed('data', rand_arr('int32', (3, 3)), 'int32'),
                   Feed('indices', idx_arr([], 'int64', (0, 3)), 'int64'),
                   Feed('updates', rand_arr('int32', (0, 3)), 'int32')],
                  {'reduction': 'mul'}, expect='passed')
    # NaN in max/min propagates (D8)
    for dt in ('float', 'double', 'float16', 'bfloat16'):
        for red in ('max', 'min'):
            node_case('valid', 'ScatterElements', 18, 'nan_in_data_%s_%s' % (red, dt),
                      [Feed('data', arr([np.nan, 1, 2, 3], dt), dt),
                       Feed('indices', idx_arr([0, 0, 2], 'int64'), 'int64'),
                       Feed('updates', arr([5, -5, 7], dt), dt)], {'reduction': red}, expect='passed')
            node_case('valid', 'ScatterElements', 18, 'nan_in_update_%s_%s' % (red, dt),
                      [Feed('data', arr([0, 1, 2, 3], dt), dt),
                       Feed('indices', idx_arr([1, 1, 3], 'int64'), 'int64'),
                       Feed('updates', arr([np.nan, 9, -1], dt), dt)], {'reduction': red}, expect='passed')
    for red in ('add', 'mul'):
        node_case('valid', 'ScatterElements', 16, 'nan_%s_float' % red,
                  [Feed('data', f32([1, 2]), 'float'), Feed('indices', idx_arr([0, 0], 'int64'), 'int64'),
                   Feed('updates', f32([np.nan, 3]), 'float')], {'reduction': red}, expect='passed')
        node_case('valid', 'ScatterElements', 18, 'inf_%s_float' % red,
                  [Feed('data', f32([1, 2]), 'float'), Feed('indices', idx_arr([0, 1], 'int64'), 'int64'),
                   Feed('updates', f32([np.inf, -np.inf]), 'float')], {'reduction': red}, expect='passed')
    # integer overflow wraps (D8)
    wraps = [('int8', 'add', [0], [100, 100, 2]), ('int8', 'mul', [100], [3, 5]),
             ('uint8', 'add', [250], [10, 255]), ('uint8', 'mul', [16], [16, 3]),
             ('int16', 'add', [32767], [1, 1]), ('uint16', 'mul', [300], [300]),
             ('int32', 'add', [2 ** 31 - 1], [1]), ('int32', 'mul', [65536], [65536, 7]),
             ('uint32', 'add', [2 ** 32 - 1], [2]), ('int64', 'mul', [2 ** 62], [4]),
             ('int64', 'add', [2 ** 63 - 1], [1]), ('uint64', 'add', [2 ** 64 - 1], [2]),
             ('uint64', 'mul', [2 ** 63], [2])]
    for opset in (16, 18):
        for dt, red, d, u in wraps:
            node_case('valid', 'ScatterElements', opset, 'overflow_wraps_%s_%s' % (red, dt),
                      [Feed('data', arr(d + [7], dt), dt), Feed('indices', idx_arr([0] * len(u), 'int32'), 'int32'),
                       Feed('updates', arr(u, dt), dt)], {'reduction': red}, expect='passed')
    # float16 rounding per step: many small adds
    node_case('valid', 'ScatterElements', 16, 'float16_add_rounding_per_step',
              [Feed('data', arr([2048.0], 'float16'), 'float16'), Feed('indices', idx_arr([0] * 8, 'int64'), 'int64'),
               Feed('updates', arr([1.0] * 8, 'float16'), 'float16')], {'reduction': 'add'}, expect='passed')
    node_case('valid', 'ScatterElements', 18, 'bfloat16_add_rounding_per_step',
              [Feed('data', arr([256.0], 'bfloat16'), 'bfloat16'), Feed('indices', idx_arr([0] * 8, 'int64'), 'int64'),
               Feed('updates', arr([1.0] * 8, 'bfloat16'), 'bfloat16')], {'reduction': 'add'}, expect='passed')
    node_case('valid', 'ScatterElements', 18, 'float_add_sequential_order',
              [Feed('data', f32([1e8]), 'float'), Feed('indices', idx_arr([0] * 6, 'int64'), 'int64'),
               Feed('updates', f32([3.0, 3.0, 3.0, 3.0, -1e8, 0.5]), 'float')], {'reduction': 'add'},
              expect='passed')

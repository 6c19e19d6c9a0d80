"""Extra ops the tool also implements (found via `onnx-idx-check ops`): GatherND, ScatterND,
TensorScatter (sections 3-4), OpenVINO Gather-8 (D13, section 6), com.microsoft GatherGrad /
GatherElementsGrad (D14). Categories xvalid / xviolation / xtampered."""
import numpy as np
from lib import (arr, tensor, npdt, SpecError, Unsupported, CLASSIC15, COMPLEX, norm_index, norm_axis, combine,
                 kernel_version)
from casekit import Feed, node_case
from gen_valid import rand_arr, idx_arr

P, E, F = 'passed', 'errored', 'failed'


def _T(dt, kv, extra=()):
    ok = set(CLASSIC15) | ({'bfloat16'} if kv >= 13 else set()) | set(extra)
    if dt not in ok:
        raise SpecError('dtype %s not allowed (D4)' % dt)


def _version(since, opset):
    vs = [v for v in since if v <= opset]
    if not vs:
        raise SpecError('op does not exist at this opset')
    return max(vs)


def ref_gathernd(opset):
    kv = _version([11, 12, 13], opset)

    def f(arrays, dts, attrs):
        data, idx = arrays
        _T(dts[0], kv)
        if dts[1] != 'int64':
            raise SpecError('GatherND indices must be int64 (D6)')
        for k in attrs:
            if k != 'batch_dims' or kv < 12:
                raise SpecError('attribute %s not defined (D5)' % k)
        b = attrs.get('batch_dims', 0)
        r, q = data.ndim, idx.ndim
        if r < 1 or q < 1:
            raise SpecError('rank')
        if not 0 <= b < min(q, r):
            raise SpecError('batch_dims range')
        if idx.shape[:b] != data.shape[:b]:
            raise SpecError('batch dims differ (D6)')
        k = idx.shape[-1]
        if not 1 <= k <= r - b:
            raise SpecError('k out of range (D6)')
        out = np.empty(idx.shape[:-1] + data.shape[b + k:], dtype=data.dtype)
        for pos in np.ndindex(*idx.shape[:-1]):
            comps = tuple(norm_index(idx[pos + (j,)], data.shape[b + j], True) for j in range(k))
            out[pos] = data[pos[:b] + comps]
        return out, False
    return f


def ref_scatternd(opset):
    kv = _version([11, 13, 16, 18], opset)

    def f(arrays, dts, attrs):
        data, idx, upd = arrays
        _T(dts[0], kv)
        if dts[1] != 'int64':
            raise SpecError('ScatterND indices must be int64 (D6)')
        if dts[2] != dts[0]:
            raise SpecError('updates dtype')
        red = 'none'
        for k, v in attrs.items():
            if k != 'reduction' or kv < 16:
                raise SpecError('attribute %s not defined (D5)' % k)
            ok = {'none', 'add', 'mul'} | ({'max', 'min'} if kv >= 18 else set())
            if v not in ok:
                raise SpecError('reduction %s (D5)' % v)
            red = v
        dt = dts[0]
        if red != 'none':
            if (dt == 'string' and red != 'add') or (dt in ['bool'] + COMPLEX and red in ('max', 'min')):
                raise Unsupported('D8')
        r, q = data.ndim, idx.ndim
        if r < 1 or q < 1:
            raise SpecError('rank')
        k = idx.shape[-1]
        if k > r:
            raise SpecError('k > r')
        if upd.shape != idx.shape[:-1] + data.shape[k:]:
            raise SpecError('updates shape (D6)')
        norm = {pos: tuple(norm_index(idx[pos + (j,)], data.shape[j], True) for j in range(k))
                for pos in np.ndindex(*idx.shape[:-1])}
        out = data.copy()
        for pos in np.ndindex(*idx.shape[:-1]):
            t = norm[pos]
            for sub in np.ndindex(*data.shape[k:]):
                out[t + sub] = combine(dt, red, out[t + sub], upd[pos + sub])
        return out, red != 'none'
    return f


def ref_tensorscatter(arrays, dts, attrs):
    past, update = arrays[0], arrays[1]
    _T(dts[0], 24)
    if dts[1] != dts[0]:
        raise SpecError('update dtype')
    for k in attrs:
        if k not in ('mode', 'axis'):
            raise SpecError('attr')
    mode = attrs.get('mode', 'linear')
    if mode not in ('linear', 'circular'):
        raise SpecError('mode')
    r = past.ndim
    axis = attrs.get('axis', -2)
    if not -r <= axis < r:
        raise SpecError('axis range')
    a = axis + r if axis < 0 else axis
    if a == 0:
        raise SpecError('axis must not be 0')
    if update.ndim != r or any(update.shape[d] != past.shape[d] for d in range(r) if d != a):
        raise SpecError('update shape')
    L, M = update.shape[a], past.shape[a]
    if L > M:
        raise SpecError('L > M')
    B = past.shape[0]
    if len(arrays) > 2:
        if dts[2] != 'int64':
            raise SpecError('write_indices int64')
        wi = arrays[2]
        if wi.shape != (B,):
            raise SpecError('write_indices shape')
    else:
        wi = np.zeros(B, np.int64)
    for w in wi.tolist():
        if w < 0:
            raise SpecError('negative write index')
        if mode == 'linear' and w + L > M:
            raise SpecError('linear overflow')
    out = past.copy()
    for p in np.ndindex(*past.shape[:a]):
        w = int(wi[p[0]])
        for j in range(L):
            dest = w + j
            if mode == 'circular':
                dest %= M
            out[p + (dest,)] = update[p + (j,)]
    return out, False


def ref_ov_gather8(arrays, dts, attrs):
    data, idx, ax = arrays
    if ax.size != 1 or dts[2] not in ('int32', 'int64') or ax.ndim > 1:
        raise SpecError('axis input')
    if dts[1] not in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'):
        raise SpecError('indices dtype')
    for k in attrs:
        if k != 'batch_dims':
            raise SpecError('attr')
    rd, ri = data.ndim, idx.ndim
    axis = norm_axis(int(ax.reshape(-1)[0]), rd)
    b = attrs.get('batch_dims', 0)
    if not -min(rd, ri) <= b <= min(rd, ri):
        raise SpecError('batch_dims range')
    if b < 0:
        b += ri
    if b > axis or b > ri or data.shape[:b] != idx.shape[:b]:
        raise SpecError('batch_dims')
    s = data.shape[axis]
    oshape = data.shape[:axis] + idx.shape[b:] + data.shape[axis + 1:]
    out = np.zeros(oshape, dtype=data.dtype) if dts[0] != 'string' else np.full(oshape, b'', dtype=object)
    for o in np.ndindex(*oshape):
        P1 = o[:axis]
        I = o[axis:axis + ri - b]
        P2 = o[axis + ri - b:]
        k = int(idx[P1[:b] + I])
        if k < 0:
            k += s
        if 0 <= k < s:
            out[o] = data[P1 + (k,) + P2]
    return out, False


GRAD_T = ('float16', 'float', 'double', 'bfloat16')


def ref_gathergrad(arrays, dts, attrs):
    shape, idx, dy = arrays
    if dts[0] != 'int64' or dts[1] not in ('int32', 'int64') or dts[2] not in GRAD_T:
        raise SpecError('types (D14)')
    shape = tuple(int(x) for x in shape)
    r = len(shape)
    a = norm_axis(attrs.get('axis', 0), r)
    if dy.shape != shape[:a] + idx.shape + shape[a + 1:]:
        raise SpecError('dY shape')
    out = np.zeros(shape, dtype=dy.dtype)
    q = idx.ndim
    for pos in np.ndindex(*dy.shape):
        i = pos[a:a + q]
        k = norm_index(idx[i], shape[a], False)
        t = pos[:a] + (k,) + pos[a + q:]
        out[t] = combine(dts[2], 'add', out[t], dy[pos])
    return out, True


def ref_gatherelementsgrad(arrays, dts, attrs):
    dy, shape, idx = arrays
    if dts[1] != 'int64' or dts[2] not in ('int32', 'int64') or dts[0] not in GRAD_T:
        raise SpecError('types (D14)')
    shape = tuple(int(x) for x in shape)
    a = norm_axis(attrs.get('axis', 0), len(shape))
    if dy.shape != idx.shape:
        raise SpecError('dY shape')
    out = np.zeros(shape, dtype=dy.dtype)
    for pos in np.ndindex(*idx.shape):
        k = norm_index(idx[pos], shape[a], False)
        t = pos[:a] + (k,) + pos[a + 1:]
        out[t] = combine(dts[0], 'add', out[t], dy[pos])
    return out, True


def build():
    i64 = lambda v, s=None: idx_arr(v, 'int64', s)
    # ---------------- GatherND
    gnd = lambda opset, what, feeds, attrs=None, expect=P, cat=None: node_case(
        cat or ('xvalid' if expect == P else 'xviolation'), 'GatherND', opset, what, feeds, attrs, expect=expect,
        ref=ref_gathernd(opset))
    for opset in (11, 12, 13):
        gnd(opset, 'k2_int32_data', [Feed('data', arr([[0, 1], [2, 3]], 'int32'), 'int32'), Feed('indices', i64([[0, 0], [1, 1]]), 'int64')])
        gnd(opset, 'k1_slices_negative', [Feed('data', rand_arr('float', (3, 2, 2)), 'float'), Feed('indices', i64([[-1], [0]]), 'int64')])
        gnd(opset, 'string_k3', [Feed('data', rand_arr('string', (2, 2, 2)), 'string'), Feed('indices', i64([[1, -1, 0]]), 'int64')])
        gnd(opset, 'int32_indices', [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', idx_arr([[0, 0]], 'int32'), 'int32')], expect=E)
        gnd(opset, 'k_gt_rank', [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', i64([[0, 0, 0]]), 'int64')], expect=E)
        gnd(opset, 'oob_component', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0, 0], [2, 0]]), 'int64')], expect=E)
        gnd(opset, 'oob_negative_component', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0, -4]]), 'int64')], expect=E)
        gnd(opset, 'k0', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([], (2, 0)), 'int64')], expect=E)
        gnd(opset, 'rank0_indices', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64(0), 'int64')], expect=E)
        gnd(opset, 'empty_indices', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([], (0, 1)), 'int64')])
    gnd(11, 'batch_dims_attr_not_in_v11', [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', i64([[0], [1]]), 'int64')],
        {'batch_dims': 0}, expect=E)
    for opset in (12, 13):
        gnd(opset, 'batch_dims1', [Feed('data', rand_arr('int64', (2, 3, 2)), 'int64'), Feed('indices', i64([[[1], [2]], [[0], [-1]]]), 'int64')],
            {'batch_dims': 1})
        gnd(opset, 'batch_dims_mismatch_2_vs_4', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0], [1], [2], [0]]), 'int64')],
            {'batch_dims': 1}, expect=E)
        gnd(opset, 'batch_dims_negative', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0], [1]]), 'int64')],
            {'batch_dims': -1}, expect=E)
        gnd(opset, 'batch_dims_eq_q', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0], [1]]), 'int64')],
            {'batch_dims': 2}, expect=E)
    gnd(13, 'bfloat16', [Feed('data', rand_arr('bfloat16', (2, 2)), 'bfloat16'), Feed('indices', i64([[1, 0]]), 'int64')])
    gnd(12, 'bfloat16_not_allowed', [Feed('data', rand_arr('bfloat16', (2, 2)), 'bfloat16'), Feed('indices', i64([[1, 0]]), 'int64')], expect=E)
    # ---------------- ScatterND
    snd = lambda opset, what, feeds, attrs=None, expect=P: node_case(
        'xvalid' if expect in (P, 'skipped') else 'xviolation', 'ScatterND', opset, what, feeds, attrs, expect=expect,
        ref=ref_scatternd(opset))
    for opset in (11, 13, 16, 18):
        snd(opset, 'k1_slices', [Feed('data', rand_arr('float', (4, 2)), 'float'), Feed('indices', i64([[1], [-1]]), 'int64'),
                                 Feed('updates', rand_arr('float', (2, 2)), 'float')])
        snd(opset, 'k2_elements_duplicates', [Feed('data', rand_arr('int32', (2, 2)), 'int32'), Feed('indices', i64([[0, 1], [0, 1]]), 'int64'),
                                              Feed('updates', arr([5, 6], 'int32'), 'int32')])
        snd(opset, 'k0_whole_tensor', [Feed('data', rand_arr('float', (2, 2)), 'float'), Feed('indices', i64([], (2, 0)), 'int64'),
                                       Feed('updates', rand_arr('float', (2, 2, 2)), 'float')])
        snd(opset, 'empty_indices', [Feed('data', rand_arr('float', (0, 3)), 'float'), Feed('indices', i64([], (0, 1)), 'int64'),
                                     Feed('updates', rand_arr('float', (0, 3)), 'float')])
        snd(opset, 'updates_wrong_shape', [Feed('data', rand_arr('float', (4, 2)), 'float'), Feed('indices', i64([[1], [2]]), 'int64'),
                                           Feed('updates', rand_arr('float', (2, 3)), 'float')], expect=E)
        snd(opset, 'int32_indices', [Feed('data', rand_arr('float', (4, 2)), 'float'), Feed('indices', idx_arr([[1]], 'int32'), 'int32'),
                                     Feed('updates', rand_arr('float', (1, 2)), 'float')], expect=E)
        snd(opset, 'oob', [Feed('data', rand_arr('float', (4, 2)), 'float'), Feed('indices', i64([[4]]), 'int64'),
                           Feed('updates', rand_arr('float', (1, 2)), 'float')], expect=E)
        snd(opset, 'k_gt_rank', [Feed('data', rand_arr('float', (4,)), 'float'), Feed('indices', i64([[1, 0]]), 'int64'),
                                 Feed('updates', rand_arr('float', (1,)), 'float')], expect=E)
        snd(opset, 'rank0_indices', [Feed('data', rand_arr('float', (4,)), 'float'), Feed('indices', i64(1), 'int64'),
                                     Feed('updates', rand_arr('float', ()), 'float')], expect=E)
    for opset in (11, 13):
        snd(opset, 'reduction_attr_before_16', [Feed('data', rand_arr('float', (4,)), 'float'), Feed('indices', i64([[1]]), 'int64'),
                                                Feed('updates', rand_arr('float', (1,)), 'float')], {'reduction': 'add'}, expect=E)
    snd(16, 'reduction_max_at_16', [Feed('data', rand_arr('float', (4,)), 'float'), Feed('indices', i64([[1]]), 'int64'),
                                    Feed('updates', rand_arr('float', (1,)), 'float')], {'reduction': 'max'}, expect=E)
    snd(18, 'reduction_sub', [Feed('data', rand_arr('float', (4,)), 'float'), Feed('indices', i64([[1]]), 'int64'),
                              Feed('updates', rand_arr('float', (1,)), 'float')], {'reduction': 'sub'}, expect=E)
    for opset, reds in ((16, ('add', 'mul')), (18, ('add', 'mul', 'max', 'min'))):
        for red in reds:
            for dt in ('int8', 'uint32', 'float', 'double', 'float16', 'bfloat16') + (('bool', 'complex64') if red in ('add', 'mul') else ()):
                snd(opset, 'reduction_%s_%s' % (red, dt),
                    [Feed('data', arr(np.arange(6).reshape(3, 2) % 3 + 1, dt), dt), Feed('indices', i64([[0], [2], [0]]), 'int64'),
                     Feed('updates', arr([[2, 3], [1, 0], [3, 1]], dt), dt)], {'reduction': red})
        snd(opset, 'reduction_add_string', [Feed('data', arr(['a', 'b'], 'string'), 'string'), Feed('indices', i64([[1], [1]]), 'int64'),
                                            Feed('updates', arr(['x', 'y'], 'string'), 'string')], {'reduction': 'add'})
    snd(18, 'reduction_max_nan_in_data', [Feed('data', arr([np.nan, 1], 'float'), 'float'), Feed('indices', i64([[0]]), 'int64'),
                                          Feed('updates', arr([5], 'float'), 'float')], {'reduction': 'max'})
    snd(18, 'reduction_max_string_skipped', [Feed('data', arr(['a', 'b'], 'string'), 'string'), Feed('indices', i64([[1]]), 'int64'),
                                             Feed('updates', arr(['x'], 'string'), 'string')], {'reduction': 'max'}, expect='skipped')
    snd(18, 'overflow_int8_add', [Feed('data', arr([100, 0], 'int8'), 'int8'), Feed('indices', i64([[0], [0]]), 'int64'),
                                  Feed('updates', arr([100, 2], 'int8'), 'int8')], {'reduction': 'add'})
    # ---------------- TensorScatter-24
    ts = lambda what, feeds, attrs=None, expect=P: node_case(
        'xvalid' if expect == P else 'xviolation', 'TensorScatter', 24, what, feeds, attrs, expect=expect, ref=ref_tensorscatter)
    past = rand_arr('float', (2, 4, 3))
    ts('linear', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 3)), 'float'), Feed('write_indices', i64([0, 2]), 'int64')])
    ts('circular_wrap', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 3)), 'float'), Feed('write_indices', i64([3, 9]), 'int64')],
       {'mode': 'circular'})
    ts('no_write_indices', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 3, 3)), 'float')])
    ts('L0', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 0, 3)), 'float'), Feed('write_indices', i64([1, 1]), 'int64')])
    ts('rank4_axis2_int8', [Feed('past_cache', rand_arr('int8', (1, 2, 4, 2)), 'int8'), Feed('update', rand_arr('int8', (1, 2, 1, 2)), 'int8'),
                            Feed('write_indices', i64([3]), 'int64')], {'axis': 2})
    ts('string_axis1', [Feed('past_cache', rand_arr('string', (2, 3)), 'string'), Feed('update', rand_arr('string', (2, 1)), 'string'),
                        Feed('write_indices', i64([0, 2]), 'int64')], {'axis': 1})
    ts('linear_overflow', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 3)), 'float'),
                           Feed('write_indices', i64([3, 0]), 'int64')], expect=E)
    ts('negative_write_index', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 3)), 'float'),
                                Feed('write_indices', i64([-1, 0]), 'int64')], {'mode': 'circular'}, expect=E)
    ts('axis0', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (1, 4, 3)), 'float')], {'axis': 0}, expect=E)
    ts('default_axis_on_rank2', [Feed('past_cache', rand_arr('float', (2, 4)), 'float'), Feed('update', rand_arr('float', (2, 4)), 'float')], expect=E)
    ts('mode_foo', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 3)), 'float')], {'mode': 'foo'}, expect=E)
    ts('write_indices_len_ne_batch', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 3)), 'float'),
                                      Feed('write_indices', i64([0, 0, 0]), 'int64')], expect=E)
    ts('L_gt_M', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 5, 3)), 'float')], {'mode': 'circular'}, expect=E)
    ts('update_shape_mismatch', [Feed('past_cache', past, 'float'), Feed('update', rand_arr('float', (2, 2, 2)), 'float')], expect=E)
    # ---------------- OpenVINO Gather-8 (D13)
    ovops = (('', 13), ('org.openvinotoolkit', 8))
    ov = lambda what, feeds, attrs=None, expect=P: node_case(
        'xvalid' if expect == P else 'xviolation', 'Gather', 8, what, feeds, attrs, expect=expect, ref=ref_ov_gather8,
        domain='org.openvinotoolkit', opsets=ovops, name='%s__ovgather_v8_%s' % ('xvalid' if expect == P else 'xviolation', what))
    ov('spec_example_zero_fill', [Feed('data', arr([1, 2, 3, 4, 5], 'float'), 'float'), Feed('indices', i64([3, 10, -20]), 'int64'),
                                  Feed('axis', i64(0), 'int64')])
    ov('string_zero_fill', [Feed('data', arr(['a', 'b'], 'string'), 'string'), Feed('indices', idx_arr([1, 5], 'int32'), 'int32'),
                            Feed('axis', idx_arr([0], 'int32'), 'int32')])
    ov('bool_zero_fill_axis1', [Feed('data', arr([[True, True], [True, False]], 'bool'), 'bool'), Feed('indices', i64([[0, -3]]), 'int64'),
                                Feed('axis', i64(-1), 'int64')])
    ov('batch_dims1_axis1', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0, 2], [1, 1]]), 'int64'),
                             Feed('axis', i64(1), 'int64')], {'batch_dims': 1})
    ov('batch_dims_eq_indices_rank', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([2, 0]), 'int64'),
                                      Feed('axis', i64(1), 'int64')], {'batch_dims': 1})
    ov('batch_dims_negative', [Feed('data', rand_arr('float', (2, 3, 4)), 'float'), Feed('indices', i64([[0, 3], [1, 9]]), 'int64'),
                               Feed('axis', i64(2), 'int64')], {'batch_dims': -1})
    ov('batch_dims_gt_axis', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([[0], [1]]), 'int64'),
                              Feed('axis', i64(0), 'int64')], {'batch_dims': 1}, expect=E)
    ov('axis_two_elements', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([0]), 'int64'),
                             Feed('axis', i64([0, 1]), 'int64')], expect=E)
    ov('axis_out_of_range', [Feed('data', rand_arr('float', (2, 3)), 'float'), Feed('indices', i64([0]), 'int64'),
                             Feed('axis', i64(2), 'int64')], expect=E)
    # ---------------- com.microsoft GatherGrad / GatherElementsGrad (D14)
    msops = (('', 13), ('com.microsoft', 1))
    gg = lambda what, feeds, attrs=None, expect=P, ref=ref_gathergrad, op='GatherGrad', tamper=None: node_case(
        'xvalid' if expect == P else ('xtampered' if tamper else 'xviolation'), op, 1, what, feeds, attrs, expect=expect, ref=ref,
        domain='com.microsoft', opsets=msops, out_dt=[f.dt for f in feeds if f.dt in GRAD_T + ('int32',) and f.name == 'dY'][0],
        tamper=tamper)
    gg('float_axis0_duplicates', [Feed('shape', i64([3, 2]), 'int64'), Feed('indices', i64([0, 2, 0]), 'int64'),
                                  Feed('dY', arr([[1, 2], [3, 4], [5, 6]], 'float'), 'float')])
    gg('double_axis1_2d_indices', [Feed('shape', i64([2, 3]), 'int64'), Feed('indices', idx_arr([[1, 1], [2, 0]], 'int32'), 'int32'),
                                   Feed('dY', arr(np.arange(8).reshape(2, 2, 2) / 4, 'double'), 'double')], {'axis': 1})
    gg('float16', [Feed('shape', i64([2]), 'int64'), Feed('indices', i64([1, 1, 1]), 'int64'), Feed('dY', arr([0.5, 0.25, 2], 'float16'), 'float16')])
    gg('bfloat16', [Feed('shape', i64([2]), 'int64'), Feed('indices', i64([1, 0, 1]), 'int64'), Feed('dY', arr([0.5, 0.25, 2], 'bfloat16'), 'bfloat16')])
    gg('int32_dY_not_allowed', [Feed('shape', i64([2]), 'int64'), Feed('indices', i64([1]), 'int64'), Feed('dY', arr([1], 'int32'), 'int32')], expect=E)
    gg('oob_index', [Feed('shape', i64([2]), 'int64'), Feed('indices', i64([2]), 'int64'), Feed('dY', arr([1], 'float'), 'float')], expect=E)
    gge = lambda what, feeds, attrs=None, expect=P: gg(what, feeds, attrs, expect, ref=ref_gatherelementsgrad, op='GatherElementsGrad')
    gge('float_axis1', [Feed('dY', arr([[1, 2], [3, 4]], 'float'), 'float'), Feed('shape', i64([2, 3]), 'int64'),
                        Feed('indices', i64([[2, 2], [0, 1]]), 'int64')], {'axis': 1})
    gge('double_axis0', [Feed('dY', arr([[1, 2, 3]], 'double'), 'double'), Feed('shape', i64([2, 3]), 'int64'),
                         Feed('indices', idx_arr([[1, 0, 1]], 'int32'), 'int32')])
    gge('oob_index', [Feed('dY', arr([[1, 2]], 'float'), 'float'), Feed('shape', i64([2, 2]), 'int64'),
                      Feed('indices', i64([[2, 0]]), 'int64')], expect=E)

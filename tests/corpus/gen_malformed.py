"""Category 5: malformed files (expected: errored), section 8 / D10-D12."""
import os as _os
HERE = _os.path.dirname(_os.path.abspath(__file__))
TOOL_PATH = _os.path.join(HERE, '..', '..', 'target', 'release', 'onnx-idx-check')

import numpy as np
import onnx
from onnx import helper as H, TensorProto as TP
from lib import arr, tensor, vi, make_model, ref_gather, ref_scatter_elements
from casekit import add, Case, MISSING
from gen_valid import rand_arr, idx_arr
from gen_storage import ext

E = 'errored'


def base(dt='float', idt='int64', shape=(2, 3), ind=(1, 0, 1)):
    data = rand_arr(dt, shape)
    ind = idx_arr(list(ind), idt)
    out = ref_gather(data, ind, 0)
    m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                   [vi('data', dt, shape), vi('indices', idt, ind.shape)], [vi('y', dt, out.shape)])
    return m, data, ind, out


def mal(what, why, model=None, inputs=None, outputs=None, extras=(), op='gather', opset=13, firm=True, datasets=None,
        dt='float'):
    m, data, ind, out = BASE
    model = m if model is None else model
    inputs = [tensor(data, dt, 'data'), tensor(ind, 'int64', 'indices')] if inputs is None else inputs
    outputs = [tensor(out, dt, 'y')] if outputs is None else outputs
    ds = datasets if datasets is not None else [{'inputs': inputs, 'outputs': outputs}]
    add(Case('malformed__%s_v%d_%s' % (op, opset, what), E, why, model, ds, extras, firm=firm))


def t_(dtype_id, dims, name='data', **fields):
    t = TP()
    t.name = name
    t.data_type = dtype_id
    t.dims.extend(dims)
    for k, v in fields.items():
        if k == 'raw_data':
            t.raw_data = v
        else:
            getattr(t, k).extend(v)
    return t


BASE = None


def build():
    global BASE
    BASE = base()
    m, data, ind, out = BASE
    good_ind = tensor(ind, 'int64', 'indices')
    good_out = tensor(out, 'float', 'y')
    mb = m.SerializeToString()
    # ---- model file
    mal('truncated_model', 'model.onnx truncated (not parseable)', model=mb[:len(mb) // 2])
    mal('truncated_model_by_one_byte', 'model.onnx truncated by one byte', model=mb[:-1])
    mal('garbage_model', 'model.onnx is garbage', model=b'\xff\xff\xff\xff\x0fnot a model at all\x00\x01')
    mal('empty_model_file', 'model.onnx is empty: no graph, no opset', model=b'', firm=False)
    # ---- garbage / truncated tensor files
    gi = b'\xff\xff\xff\xff\xff\xff garbage \x07'
    try:
        TP().ParseFromString(gi)
        raise SystemExit('garbage parsed')
    except Exception:
        pass
    mal('garbage_input_pb', 'input_0.pb not a TensorProto', inputs=[gi, good_ind])
    mal('garbage_output_pb', 'output_0.pb not a TensorProto', outputs=[gi])
    ser = tensor(data, 'float', 'data').SerializeToString()
    mal('truncated_input_pb', 'input_0.pb truncated', inputs=[ser[:-3], good_ind])
    # ---- raw_data sizes (D10)
    raw = data.astype('<f4').tobytes()
    mal('raw_too_short_input', 'raw_data 20 bytes for 24 required', inputs=[t_(TP.FLOAT, [2, 3], raw_data=raw[:-4]), good_ind])
    mal('raw_too_long_input', 'raw_data 28 bytes for 24 required', inputs=[t_(TP.FLOAT, [2, 3], raw_data=raw + b'\0\0\0\0'), good_ind])
    mal('raw_one_extra_byte_input', 'raw_data 25 bytes for 24', inputs=[t_(TP.FLOAT, [2, 3], raw_data=raw + b'\0'), good_ind])
    oraw = out.astype('<f4').tobytes()
    mal('raw_too_short_output', 'output raw_data too short', outputs=[t_(TP.FLOAT, [3, 3], 'y', raw_data=oraw[:-4])])
    mal('raw_too_long_output', 'output raw_data too long', outputs=[t_(TP.FLOAT, [3, 3], 'y', raw_data=oraw + b'\0' * 4)])
    iraw = ind.astype('<i8').tobytes()
    mal('raw_indices_too_short', 'indices raw_data 16 bytes for 24', inputs=[tensor(data, 'float', 'data'),
                                                                            t_(TP.INT64, [3], 'indices', raw_data=iraw[:-8])])
    mal('raw_bool_too_long', 'bool raw 1 byte per element',
        model=make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                         [vi('data', 'bool', (4,)), vi('indices', 'int64', (1,))], [vi('y', 'bool', (1,))]),
        inputs=[t_(TP.BOOL, [4], raw_data=bytes([1, 0, 1, 0, 1, 0, 1, 0])), tensor(idx_arr([0], 'int64'), 'int64', 'indices')],
        outputs=[tensor(np.array([True]), 'bool', 'y')])
    mal('raw_complex64_half_size', 'complex64 raw needs 8 bytes per element',
        model=make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                         [vi('data', 'complex64', (2,)), vi('indices', 'int64', (1,))], [vi('y', 'complex64', (1,))]),
        inputs=[t_(TP.COMPLEX64, [2], raw_data=np.array([1, 2], '<f4').tobytes()), tensor(idx_arr([0], 'int64'), 'int64', 'indices')],
        outputs=[tensor(arr([1 + 2j], 'complex64'), 'complex64', 'y')])
    # initializer raw too long
    mi = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])], [vi('data', 'float', (2, 3))],
                    [vi('y', 'float', out.shape)], inits=[t_(TP.INT64, [3], 'indices', raw_data=iraw + b'\0' * 8)])
    mal('raw_too_long_initializer', 'initializer raw_data too long', model=mi, inputs=[tensor(data, 'float', 'data')])
    # Constant value tensor too short
    mc = make_model([H.make_node('Constant', [], ['indices'], value=t_(TP.INT64, [3], '', int64_data=[1, 0])),
                     H.make_node('Gather', ['data', 'indices'], ['y'])], [vi('data', 'float', (2, 3))],
                    [vi('y', 'float', out.shape)])
    mal('constant_value_typed_too_short', 'Constant value int64_data 2 for 3', model=mc, inputs=[tensor(data, 'float', 'data')])
    # ---- typed sizes
    fl = data.reshape(-1).tolist()
    mal('float_data_too_short', 'float_data 5 for 6', inputs=[t_(TP.FLOAT, [2, 3], float_data=fl[:-1]), good_ind])
    mal('float_data_too_long', 'float_data 7 for 6', inputs=[t_(TP.FLOAT, [2, 3], float_data=fl + [1.0]), good_ind])
    mal('int64_data_too_long', 'int64_data 4 for 3', inputs=[tensor(data, 'float', 'data'),
                                                          t_(TP.INT64, [3], 'indices', int64_data=[1, 0, 1, 0])])
    mal('int64_data_too_short_output', 'output float_data too short', outputs=[t_(TP.FLOAT, [3, 3], 'y', float_data=out.reshape(-1).tolist()[:-1])])
    sm = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                    [vi('data', 'string', (3,)), vi('indices', 'int64', (1,))], [vi('y', 'string', (1,))])
    one = tensor(idx_arr([0], 'int64'), 'int64', 'indices')
    sout = tensor(arr(['a'], 'string'), 'string', 'y')
    mal('string_data_too_long', 'string_data 4 for 3', model=sm, inputs=[t_(TP.STRING, [3], string_data=[b'a', b'b', b'c', b'd']), one],
        outputs=[sout])
    mal('string_data_too_short', 'string_data 2 for 3', model=sm, inputs=[t_(TP.STRING, [3], string_data=[b'a', b'b']), one],
        outputs=[sout])
    mal('string_in_raw_data', 'STRING may not use raw_data', model=sm, inputs=[t_(TP.STRING, [3], raw_data=b'abc'), one],
        outputs=[sout])
    c64 = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                     [vi('data', 'complex64', (2,)), vi('indices', 'int64', (1,))], [vi('y', 'complex64', (1,))])
    cout = tensor(arr([1 + 2j], 'complex64'), 'complex64', 'y')
    mal('complex64_float_data_odd', 'complex64 needs 4 floats for 2 elements, 3 given', model=c64,
        inputs=[t_(TP.COMPLEX64, [2], float_data=[1, 2, 3]), one], outputs=[cout])
    mal('complex64_float_data_one_per_element', 'complex64 needs pairs, 2 floats for 2 elements', model=c64,
        inputs=[t_(TP.COMPLEX64, [2], float_data=[1, 2]), one], outputs=[cout])
    i8m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                     [vi('data', 'int8', (3,)), vi('indices', 'int64', (1,))], [vi('y', 'int8', (1,))])
    i8out = tensor(arr([1], 'int8'), 'int8', 'y')
    mal('int32_data_too_short_int8', 'int32_data 2 for 3', model=i8m, inputs=[t_(TP.INT8, [3], int32_data=[1, 2]), one], outputs=[i8out])
    mal('int8_entry_300_in_int32_data', 'int8 value 300 does not fit (section 8: reject as malformed)', model=i8m,
        inputs=[t_(TP.INT8, [3], int32_data=[1, 300, 3]), one], outputs=[i8out])
    mal('int8_entry_minus_129', 'int8 value -129 does not fit', model=i8m,
        inputs=[t_(TP.INT8, [3], int32_data=[1, -129, 3]), one], outputs=[i8out])
    u8m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                     [vi('data', 'uint8', (3,)), vi('indices', 'int64', (1,))], [vi('y', 'uint8', (1,))])
    mal('uint8_entry_minus1_in_int32_data', 'uint8 value -1 does not fit', model=u8m, firm=False,
        inputs=[t_(TP.UINT8, [3], int32_data=[1, -1, 3]), one], outputs=[tensor(arr([1], 'uint8'), 'uint8', 'y')])
    f16m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                      [vi('data', 'float16', (2,)), vi('indices', 'int64', (1,))], [vi('y', 'float16', (1,))])
    mal('float16_bits_over_0xffff', 'float16 bit pattern 0x13c00 exceeds 16 bits', model=f16m, firm=False,
        inputs=[t_(TP.FLOAT16, [2], int32_data=[0x13C00, 0x4000]), one], outputs=[tensor(arr([1.0], 'float16'), 'float16', 'y')])
    # ---- wrong typed field for the dtype
    mal('int32_data_for_float', 'FLOAT must use float_data', inputs=[t_(TP.FLOAT, [2, 3], int32_data=[1, 2, 3, 4, 5, 6]), good_ind])
    mal('double_data_for_float', 'FLOAT must use float_data', inputs=[t_(TP.FLOAT, [2, 3], double_data=fl), good_ind])
    mal('float_data_for_double', 'DOUBLE must use double_data',
        model=make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                         [vi('data', 'double', (2, 3)), vi('indices', 'int64', (3,))], [vi('y', 'double', out.shape)]),
        inputs=[t_(TP.DOUBLE, [2, 3], float_data=fl), good_ind], outputs=[tensor(out.astype(np.float64), 'double', 'y')])
    mal('int32_data_for_int64_indices', 'INT64 must use int64_data',
        inputs=[tensor(data, 'float', 'data'), t_(TP.INT64, [3], 'indices', int32_data=[1, 0, 1])])
    mal('int64_data_for_int32_indices', 'INT32 must use int32_data',
        model=base(idt='int32')[0], inputs=[tensor(data, 'float', 'data'), t_(TP.INT32, [3], 'indices', int64_data=[1, 0, 1])])
    mal('uint64_data_for_int64_indices', 'INT64 must use int64_data',
        inputs=[tensor(data, 'float', 'data'), t_(TP.INT64, [3], 'indices', uint64_data=[1, 0, 1])])
    u32m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                      [vi('data', 'uint32', (3,)), vi('indices', 'int64', (1,))], [vi('y', 'uint32', (1,))])
    mal('int32_data_for_uint32', 'UINT32 must use uint64_data', model=u32m,
        inputs=[t_(TP.UINT32, [3], int32_data=[1, 2, 3]), one], outputs=[tensor(arr([1], 'uint32'), 'uint32', 'y')])
    mal('int64_data_for_uint64', 'UINT64 must use uint64_data',
        model=make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                         [vi('data', 'uint64', (3,)), vi('indices', 'int64', (1,))], [vi('y', 'uint64', (1,))]),
        inputs=[t_(TP.UINT64, [3], int64_data=[1, 2, 3]), one], outputs=[tensor(arr([1], 'uint64'), 'uint64', 'y')])
    mal('float_data_for_float16', 'FLOAT16 must use int32_data bit patterns', model=f16m,
        inputs=[t_(TP.FLOAT16, [2], float_data=[1.0, 2.0]), one], outputs=[tensor(arr([1.0], 'float16'), 'float16', 'y')])
    mal('string_data_for_float', 'FLOAT must use float_data', inputs=[t_(TP.FLOAT, [2, 3], string_data=[b'1'] * 6), good_ind])
    mal('int32_data_for_bool_output_as_float', 'output FLOAT stored in int32_data',
        outputs=[t_(TP.FLOAT, [3, 3], 'y', int32_data=[0] * 9)])
    # ---- both raw and typed; neither
    mal('both_raw_and_typed', 'raw_data and float_data both set',
        inputs=[t_(TP.FLOAT, [2, 3], raw_data=raw, float_data=fl), good_ind])
    mal('both_raw_and_typed_output', 'raw_data and float_data both set on output',
        outputs=[t_(TP.FLOAT, [3, 3], 'y', raw_data=oraw, float_data=out.reshape(-1).tolist())])
    mal('no_data_nonempty', 'non-empty tensor without any data field', inputs=[t_(TP.FLOAT, [2, 3]), good_ind])
    mal('scalar_no_data', 'rank-0 tensor (1 element) without data', inputs=[tensor(data, 'float', 'data'), t_(TP.INT64, [], 'indices')],
        model=make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                         [vi('data', 'float', (2, 3)), vi('indices', 'int64', ())], [vi('y', 'float', (3,))]),
        outputs=[tensor(data[0], 'float', 'y')])
    # ---- data_type problems
    mal('unknown_data_type_99', 'data_type 99 unknown (D10)', inputs=[t_(99, [2, 3], raw_data=raw), good_ind])
    mal('undefined_data_type', 'data_type UNDEFINED', inputs=[t_(0, [2, 3], raw_data=raw), good_ind])
    mal('undefined_data_type_output', 'output data_type UNDEFINED', outputs=[t_(0, [3, 3], 'y', raw_data=oraw)])
    mal('unknown_data_type_output', 'output data_type 77', outputs=[t_(77, [3, 3], 'y', raw_data=oraw)])
    # ---- dims problems (D12)
    mal('negative_dims', 'negative dimension', inputs=[t_(TP.FLOAT, [-2, 3], raw_data=raw), good_ind])
    mal('negative_dims_empty', 'negative dimension (with a zero dim)', inputs=[t_(TP.FLOAT, [0, -3]), good_ind])
    mal('huge_dims_claim_raw', 'dims [2^40] with 24 bytes', inputs=[t_(TP.FLOAT, [1 << 40], raw_data=raw), good_ind])
    mal('huge_dims_claim_typed', 'dims [2^31, 2^20] with 6 floats', inputs=[t_(TP.FLOAT, [1 << 31, 1 << 20], float_data=fl), good_ind])
    mal('dims_product_overflow', 'dims product overflows u64', inputs=[t_(TP.FLOAT, [1 << 62, 1 << 62, 16], raw_data=raw), good_ind])
    mal('dims_product_overflow_with_zero', 'dims product overflow hidden by a later 0? (2^62*2^62*0)', firm=False,
        inputs=[t_(TP.FLOAT, [1 << 62, 1 << 62, 0]), good_ind])
    mal('huge_dims_output', 'output dims [2^40]', outputs=[t_(TP.FLOAT, [1 << 40], 'y', raw_data=oraw)])
    mal('huge_string_dims', 'string dims [2^40] with 3 strings', model=sm,
        inputs=[t_(TP.STRING, [1 << 40], string_data=[b'a', b'b', b'c']), one], outputs=[sout])
    # ---- segment in a malformed way is in skipped; missing / extra files
    mal('missing_output_file', 'output_0.pb missing', outputs=[])
    mal('extra_output_file', 'output_1.pb has no graph output', outputs=[good_out, good_out])
    mal('missing_input_file', 'input_1.pb missing', inputs=[tensor(data, 'float', 'data')])
    mal('missing_first_input_file', 'input_0.pb missing, input_1.pb present', inputs=[MISSING, good_ind])
    mal('extra_input_file', 'input_2.pb has no graph input', inputs=[tensor(data, 'float', 'data'), good_ind, good_ind])
    mal('input_dtype_differs_from_graph', 'indices file int32, graph declares int64',
        inputs=[tensor(data, 'float', 'data'), tensor(ind.astype(np.int32), 'int32', 'indices')])
    mal('input_dtype_differs_from_graph_data', 'data file double, graph declares float',
        inputs=[tensor(data.astype(np.float64), 'double', 'data'), good_ind])
    mal('input_file_for_initializer', 'input_1.pb given but indices is an initializer (no such graph input)',
        model=make_model([H.make_node('Gather', ['data', 'indices'], ['y'])], [vi('data', 'float', (2, 3))],
                         [vi('y', 'float', out.shape)], inits=[tensor(ind, 'int64', 'indices')]),
        inputs=[tensor(data, 'float', 'data'), good_ind])
    mal('no_data_set_has_outputs_second_set_missing_output', 'test_data_set_1 lacks output_0.pb',
        datasets=[{'inputs': [tensor(data, 'float', 'data'), good_ind], 'outputs': [good_out]},
                  {'inputs': [tensor(data, 'float', 'data'), good_ind], 'outputs': []}])
    # ---- external data attacks (D11)
    def ext_in(what, location, why, offset=None, length=None, extras=(), firm=True, keys=(), drop_location=False):
        t, payload = ext(tensor(data, 'float', 'data'), location, offset, length, keys)
        if drop_location:
            kept = [(e.key, e.value) for e in t.external_data if e.key != 'location']
            t.ClearField('external_data')
            for k, v in kept:
                e = t.external_data.add()
                e.key, e.value = k, v
        ex = [(x[0], x[1], payload if len(x) > 2 and x[2] is None else x[2]) if len(x) > 2 else x for x in extras]
        mal('external_' + what, why, inputs=[t, good_ind], extras=ex, firm=firm)
    ext_in('dotdot_escape', '../x.bin', 'location ../x.bin leaves the data-set dir', extras=[('file', 'x.bin', None)])
    ext_in('dotdot_escape_twice', '../../secret.bin', 'location ../../ leaves the case dir', extras=[('file', 'x.bin', None)])
    ext_in('absolute_path', _os.path.join(HERE, 'abs_target.bin'), 'absolute location')
    ext_in('nested_dotdot', 'a/../../x.bin', 'a/../../x.bin resolves outside (CVE-2024-27318)',
           extras=[('file', 'x.bin', None), ('dir', 'test_data_set_0/a')])
    ext_in('offset_past_eof', 'data.bin', 'offset 100 > file size 24', offset=100, extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('length_past_eof', 'data.bin', 'offset 8 + length 24 > 24', offset=8, length=24,
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('length_too_small', 'data.bin', 'length 20 != 24 bytes needed', length=20,
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('offset_overflow', 'data.bin', 'offset 2^64-1 + length overflow', offset=2 ** 64 - 1, length=24,
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('huge_length', 'data.bin', 'length 2^62 past EOF, must not allocate', length=2 ** 62,
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('negative_offset', 'data.bin', 'offset -4 not a non-negative decimal', offset=-4,
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('non_numeric_length', 'data.bin', 'length abc', keys=[('length', 'abc')],
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('file_longer_than_tensor_to_eof', 'data.bin', 'no length: reads to EOF, 28 bytes != 24',
           extras=[('file', 'test_data_set_0/data.bin', b'\0' * 28)])
    ext_in('missing_file', 'nope.bin', 'external file does not exist')
    ext_in('location_is_directory', 'adir', 'location is a directory', extras=[('dir', 'test_data_set_0/adir')])
    ext_in('no_location_key', 'data.bin', 'no location key', drop_location=True,
           extras=[('file', 'test_data_set_0/data.bin', None)])
    ext_in('symlink_final_component', 'link.bin', 'final component is a symlink (to a file outside)',
           extras=[('file', 'x.bin', None), ('symlink', 'test_data_set_0/link.bin', '../x.bin')])
    ext_in('symlink_parent_component', 'lnk/x.bin', 'parent component symlink leaving the dir',
           extras=[('file', 'x.bin', None), ('symlink', 'test_data_set_0/lnk', '..')])
    ext_in('hardlink', 'hl.bin', 'hard link (st_nlink > 1)',
           extras=[('file', 'x.bin', None), ('hardlink', 'test_data_set_0/hl.bin', 'x.bin')])
    ext_in('nul_in_location', 'data.bin\x00.txt', 'NUL byte in location', extras=[('file', 'test_data_set_0/data.bin', None)])
    # initializer escaping the model dir
    t, payload = ext(tensor(ind, 'int64', 'indices'), '../outside_init.bin', None, None)
    mi = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])], [vi('data', 'float', (2, 3))],
                    [vi('y', 'float', out.shape)], inits=[t])
    mal('external_initializer_dotdot', 'initializer location ../outside_init.bin leaves the model dir', model=mi,
        inputs=[tensor(data, 'float', 'data')], extras=[('file', 'sub/../../outside_init.bin', payload)])
    # output external escaping
    t, payload = ext(tensor(out, 'float', 'y'), '../y.bin', None, None)
    mal('external_output_dotdot', 'output_0.pb location ../y.bin leaves the data-set dir', outputs=[t],
        extras=[('file', 'y.bin', payload)])

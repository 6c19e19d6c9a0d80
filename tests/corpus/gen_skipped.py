"""Category 6: skipped (D1 unsupported op / unknown domain, D8 reductions, D10 segment, sequences)."""
import numpy as np
import onnx
from onnx import helper as H, TensorProto as TP, numpy_helper as NH
from lib import arr, tensor, vi, make_model, ref_gather
from casekit import Feed, node_case, add, Case
from gen_valid import rand_arr, idx_arr

S = 'skipped'


def build():
    a = rand_arr('float', (2, 3))
    b = rand_arr('float', (2, 3))
    # unsupported ops in the default domain
    m = make_model([H.make_node('Add', ['a', 'b'], ['y'])], [vi('a', 'float', (2, 3)), vi('b', 'float', (2, 3))],
                   [vi('y', 'float', (2, 3))])
    add(Case('skipped__add_v13_unsupported_op', S, 'Add not implemented (D1, D15)', m,
             [{'inputs': [tensor(a, 'float', 'a'), tensor(b, 'float', 'b')], 'outputs': [tensor(a + b, 'float', 'y')]}]))
    ind = idx_arr([1, 0], 'int64')
    g = ref_gather(a, ind, 0)
    m = make_model([H.make_node('Gather', ['a', 'indices'], ['g']), H.make_node('Relu', ['g'], ['y'])],
                   [vi('a', 'float', (2, 3)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 3))])
    add(Case('skipped__relu_v13_after_gather', S, 'Relu not implemented (D15: any other op skipped)', m,
             [{'inputs': [tensor(a, 'float', 'a'), tensor(ind, 'int64', 'indices')],
               'outputs': [tensor(np.maximum(g, 0), 'float', 'y')]}]))
    # Loop with a trivial body
    body = H.make_graph([H.make_node('Identity', ['cond_in'], ['cond_out']), H.make_node('Identity', ['v_in'], ['v_out'])],
                        'body', [vi('i', 'int64', ()), vi('cond_in', 'bool', ()), vi('v_in', 'float', (2, 3))],
                        [vi('cond_out', 'bool', ()), vi('v_out', 'float', (2, 3))])
    m = make_model([H.make_node('Loop', ['M', '', 'a'], ['y'], body=body)],
                   [vi('a', 'float', (2, 3))], [vi('y', 'float', (2, 3))], inits=[tensor(np.array(2, np.int64), 'int64', 'M')])
    add(Case('skipped__loop_v13_unsupported_op', S, 'Loop not implemented', m,
             [{'inputs': [tensor(a, 'float', 'a')], 'outputs': [tensor(a, 'float', 'y')]}]))
    m = make_model([H.make_node('Unique', ['a'], ['y'])], [vi('a', 'float', (2, 3))], [vi('y', 'float', None)], opsets=(('', 11),))
    add(Case('skipped__unique_v11_unsupported_op', S, 'Unique not implemented', m,
             [{'inputs': [tensor(a, 'float', 'a')], 'outputs': [tensor(np.unique(a), 'float', 'y')]}]))
    # unknown (but imported) domain
    for dom, op in (('com.example', 'Foo'), ('com.example', 'Gather'), ('my.custom', 'ScatterElements')):
        m = make_model([H.make_node(op, ['a', 'indices'], ['y'], domain=dom)],
                       [vi('a', 'float', (2, 3)), vi('indices', 'int64', (2,))], [vi('y', 'float', (2, 3))],
                       opsets=(('', 13), (dom, 1)))
        add(Case('skipped__%s_v1_unknown_domain_%s' % (op.lower(), dom.replace('.', '_')), S,
                 'domain %s unknown (D1)' % dom, m,
                 [{'inputs': [tensor(a, 'float', 'a'), tensor(ind, 'int64', 'indices')], 'outputs': [tensor(g, 'float', 'y')]}]))
    # reductions listed as skipped in D8
    se = lambda dt, opset, red: node_case(
        'skipped', 'ScatterElements', opset, 'reduction_%s_%s' % (red, dt),
        [Feed('data', rand_arr(dt, (2, 2)), dt), Feed('indices', idx_arr([[0, 1], [0, 1]], 'int64'), 'int64'),
         Feed('updates', rand_arr(dt, (2, 2)), dt)], {'reduction': red}, expect=S)
    for red in ('mul', 'max', 'min'):
        se('string', 18, red)
    se('string', 16, 'mul')
    for red in ('max', 'min'):
        se('bool', 18, red)
        se('complex64', 18, red)
        se('complex128', 18, red)
    # sequence-typed graph input
    seq = [rand_arr('float', (2,)), rand_arr('float', (2,))]
    sp = onnx.numpy_helper.from_list(seq, name='s')
    st = H.make_tensor_sequence_value_info('s', TP.FLOAT, None)
    m = make_model([H.make_node('Identity', ['s'], ['y'])], [st], [H.make_tensor_sequence_value_info('y', TP.FLOAT, None)],
                   opsets=(('', 13),))
    add(Case('skipped__identity_v13_sequence_input', S, 'sequence-typed graph input unsupported', m,
             [{'inputs': [sp], 'outputs': [onnx.numpy_helper.from_list(seq, name='y')]}]))
    m = make_model([H.make_node('SequenceAt', ['s', 'pos'], ['x']), H.make_node('Gather', ['x', 'indices'], ['y'])],
                   [st, vi('pos', 'int64', ()), vi('indices', 'int64', (2,))], [vi('y', 'float', (2,))], opsets=(('', 13),))
    add(Case('skipped__sequenceat_v13_sequence_input_then_gather', S, 'sequence input and SequenceAt unsupported', m,
             [{'inputs': [sp, tensor(np.array(1, np.int64), 'int64', 'pos'), tensor(ind, 'int64', 'indices')],
               'outputs': [tensor(seq[1][[1, 0]], 'float', 'y')]}]))
    # segment tensor (D10)
    t = tensor(a, 'float', 'a')
    t.segment.begin = 0
    t.segment.end = 6
    m = make_model([H.make_node('Gather', ['a', 'indices'], ['y'])], [vi('a', 'float', (2, 3)), vi('indices', 'int64', (2,))],
                   [vi('y', 'float', (2, 3))])
    add(Case('skipped__gather_v13_segment_tensor_input', S, 'segment tensors unsupported (D10)', m,
             [{'inputs': [t, tensor(ind, 'int64', 'indices')], 'outputs': [tensor(g, 'float', 'y')]}]))
    t = tensor(g, 'float', 'y')
    t.segment.begin = 0
    t.segment.end = 6
    add(Case('skipped__gather_v13_segment_tensor_output', S, 'segment tensors unsupported (D10)', m,
             [{'inputs': [tensor(a, 'float', 'a'), tensor(ind, 'int64', 'indices')], 'outputs': [t]}]))

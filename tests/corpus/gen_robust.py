"""Robustness probes: large ranks / sizes, odd opset numbers. Verdicts still from lib.evaluate."""
import numpy as np
from onnx import helper as H
from lib import arr, tensor, vi, make_model, ref_gather
from casekit import Feed, node_case, add, Case
from gen_valid import rand_arr, idx_arr

P, E, S = 'passed', 'errored', 'skipped'


def build():
    node_case('robust', 'Gather', 13, 'rank64_data',
              [Feed('data', rand_arr('float', (2,) + (1,) * 61 + (3,)), 'float'), Feed('indices', idx_arr([[1, 0]], 'int64'), 'int64')],
              {'axis': -1}, expect=P)
    # rank 2000 (beyond numpy's 64): hand-built; GatherElements along the last axis
    R = 2000
    dv = arr([1.5, 2.5, 3.5], 'float')
    iv = idx_arr([2, 0, 1, -1], 'int64')
    ov = dv[[2, 0, 1, 2]]
    dt_ = tensor(dv, 'float', 'data'); del dt_.dims[:]; dt_.dims.extend([1] * (R - 1) + [3])
    it_ = tensor(iv, 'int64', 'indices'); del it_.dims[:]; it_.dims.extend([1] * (R - 1) + [4])
    ot_ = tensor(ov, 'float', 'y'); del ot_.dims[:]; ot_.dims.extend([1] * (R - 1) + [4])
    m = make_model([H.make_node('GatherElements', ['data', 'indices'], ['y'], axis=-1)],
                   [vi('data', 'float', None), vi('indices', 'int64', None)], [vi('y', 'float', None)])
    add(Case('robust__gather_elements_v13_rank2000_ones', P, 'rank 2000, last axis', m,
             [{'inputs': [dt_, it_], 'outputs': [ot_]}], firm=False))
    node_case('robust', 'ScatterElements', 18, 'million_updates_one_cell_add_float',
              [Feed('data', arr([0.0, 1.0], 'float'), 'float'), Feed('indices', np.zeros(1_000_000, np.int64), 'int64'),
               Feed('updates', arr(np.full(1_000_000, 0.1), 'float'), 'float')], {'reduction': 'add'}, expect=P)
    node_case('robust', 'Gather', 13, 'indices_2M',
              [Feed('data', rand_arr('int8', (7, 3)), 'int8'), Feed('indices', np.random.default_rng(1).integers(-7, 7, 2_000_000), 'int64')],
              expect=P)
    node_case('robust', 'Gather', 13, 'string_10MB',
              [Feed('data', arr([b'x' * 10_000_000, b'y'], 'string'), 'string'), Feed('indices', idx_arr([0, 1, 0], 'int64'), 'int64')],
              expect=P, ort=False)
    node_case('robust', 'ScatterElements', 18, 'string_add_long_chain',
              [Feed('data', arr([b'a'], 'string'), 'string'), Feed('indices', np.zeros(20000, np.int64), 'int64'),
               Feed('updates', arr([b'bc'] * 20000, 'string'), 'string')], {'reduction': 'add'}, expect=P, ort=False)
    d = rand_arr('float', (3, 2))
    for opset, st, why in ((0, E, 'Gather has no version <= 0 (D1)'), (-1, E, 'negative opset: no version (D1)'),
                           (1 << 40, P, 'huge opset resolves to Gather-13 (D1)')):
        m = make_model([H.make_node('Gather', ['data', 'indices'], ['y'])],
                       [vi('data', 'float', (3, 2)), vi('indices', 'int64', (1,))], [vi('y', 'float', (1, 2))],
                       opsets=(('', opset),), ir=8)
        add(Case('robust__gather_v%s_opset_%s' % (opset, 'huge' if opset > 100 else opset), st, why, m,
                 [{'inputs': [tensor(d, 'float', 'data'), tensor(idx_arr([2], 'int64'), 'int64', 'indices')],
                   'outputs': [tensor(d[[2]], 'float', 'y')]}], firm=False))
    m = make_model([H.make_node('', ['data'], ['y'])], [vi('data', 'float', (3, 2))], [vi('y', 'float', (3, 2))])
    add(Case('robust__empty_op_type_v13', S, 'op "" unknown in a known domain (D1)', m,
             [{'inputs': [tensor(d, 'float', 'data')], 'outputs': [tensor(d, 'float', 'y')]}], firm=False))
    # deeply nested Loop bodies (decoder recursion), built on the wire because python protobuf caps depth at 100
    def ld(field, payload):
        key = (field << 3) | 2
        return _varint(key) + _varint(len(payload)) + payload
    g = ld(2, b'inner')
    for depth in range(3000):
        attr = ld(1, b'body') + _varint((20 << 3) | 0) + _varint(5) + ld(6, g)
        node = ld(4, b'Loop') + ld(5, attr)
        g = ld(1, node) + ld(2, b'g%d' % depth)
    outer = make_model([H.make_node('Identity', ['data'], ['y'])], [vi('data', 'float', (3, 2))], [vi('y', 'float', (3, 2))])
    ob = outer.SerializeToString()
    # append a Loop node (wrapping the nested body) to the graph: ModelProto.graph is field 7; re-encode the graph
    gb = outer.graph.SerializeToString()
    loop_attr = ld(1, b'body') + _varint((20 << 3) | 0) + _varint(5) + ld(6, g)
    loop_node = ld(4, b'Loop') + ld(5, loop_attr)
    gb2 = ld(1, loop_node) + gb
    outer.ClearField('graph')
    mb = outer.SerializeToString() + ld(7, gb2)
    add(Case('robust__loop_v13_nested_3000_deep', E,
             '9000-deep message nesting: errored by the decoder recursion limit (skipped would also be acceptable); must not crash',
             mb, [{'inputs': [tensor(d, 'float', 'data')], 'outputs': [tensor(d, 'float', 'y')]}], firm=False))


def _varint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

#!/usr/bin/env python3
"""Independent minimal re-hasher for ZLM1 schema-1.9 identities.

Reads JSON-lines facts (fact, domain, parts, preimage, digest) on stdin,
recomputes each digest from the domain and the hex parts with its own
F-framing, and re-derives a few identities of the sample module from first
principles (names and tags only). Exits nonzero on any mismatch.
"""
import hashlib, json, struct, sys

def F(p): return struct.pack('<Q', len(p)) + p
def S(*es): return struct.pack('<I', len(es)) + b''.join(F(e) for e in es)
def u32(v): return struct.pack('<I', v)
def opt(v): return b'\x00' if v is None else b'\x01' + v
def H(d, *parts): return hashlib.sha256(d.encode() + b'\x00' + b''.join(F(p) for p in parts)).digest()

facts = [json.loads(l) for l in sys.stdin if l.strip()]
by_fact = {}
for f in facts:
    parts = [bytes.fromhex(p) for p in f['parts']]
    pre = f['domain'].encode() + b'\x00' + b''.join(F(p) for p in parts)
    if 'preimage' in f and pre.hex() != f['preimage']:
        sys.exit('preimage mismatch: ' + f['fact'])
    if hashlib.sha256(pre).hexdigest() != f['digest']:
        sys.exit('digest mismatch: ' + f['fact'])
    by_fact.setdefault(f['fact'], f['digest'])

if '--frames-only' in sys.argv:
    print('ok', len(facts), 'facts')
    sys.exit(0)

ns = H('zerglang.zlm1.module-namespace.v1', b'demo', b'geo.shapes')
point = H('zerglang.zlm1.declaration-nominal.v1', ns, u32(0), b'Point')
shape = H('zerglang.zlm1.declaration-nominal.v1', ns, u32(2), b'Shape')
int32 = H('zerglang.zlm1.type-instance.v1', opt(None), u32(0), opt(u32(5)), opt(None), S())
field_x = H('zerglang.zlm1.field.v1', u32(0), point, u32(0), b'x', u32(0), u32(0), int32, u32(0))
circle = H('zerglang.zlm1.variant.v1', shape, u32(1), b'Circle')
empty_effects = H('zerglang.zlm1.effect-set.v1', S())
io_abort = H('zerglang.zlm1.effect-set.v1', S(u32(0), u32(6)))
ref_point = H('zerglang.zlm1.type-instance.v1', opt(b'zerglang.selfhost-intrinsics/1'), u32(7), opt(None), opt(None),
              S(H('zerglang.zlm1.type-instance.v1', opt(None), u32(3), opt(None), opt(point), S())))
expected = {
    'module namespace demo/geo.shapes': ns,
    'declaration Point': point,
    'declaration Shape': shape,
    'type Int32': int32,
    'field Point.x': field_x,
    'variant Shape.Circle': circle,
    'effect set []': empty_effects,
    'effect set [io abort]': io_abort,
}
for name, digest in expected.items():
    if by_fact.get(name) != digest.hex():
        sys.exit('independent recomputation differs for ' + name)
if ref_point.hex() not in {f['digest'] for f in facts}:
    sys.exit('Ref<Point> type instance not found')
print('ok', len(facts), 'facts')

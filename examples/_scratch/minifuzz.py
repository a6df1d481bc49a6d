"""Scratch coverage-guided mutation fuzzer (sys.monitoring BRANCH/LINE), for checking targets."""
import importlib.util, os, random, sys, time, traceback
sys.path.insert(0, "/work/main/src")
import assay
from assay.target import REGISTRY
from assay.verdict import classify
from assay import observe

TOOL = 3
def load(path):
    spec = importlib.util.spec_from_file_location("t_" + os.path.basename(path)[:-3], path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

class Cov:
    def __init__(self, paths):
        self.paths = [os.path.realpath(p) for p in paths]
        self.cur = set()
        self.incode = {}
        mon = sys.monitoring
        mon.use_tool_id(TOOL, "minifuzz")
        mon.register_callback(TOOL, mon.events.BRANCH, self.branch)
        mon.register_callback(TOOL, mon.events.LINE, self.line)
        mon.set_events(TOOL, mon.events.BRANCH | mon.events.LINE)
    def ok(self, code):
        r = self.incode.get(code)
        if r is None:
            f = os.path.realpath(code.co_filename)
            r = any(f == p or f.startswith(p + os.sep) for p in self.paths)
            self.incode[code] = r
        return r
    def branch(self, code, off, dest):
        if not self.ok(code): return sys.monitoring.DISABLE
        self.cur.add((code, off, dest))
    def line(self, code, ln):
        if not self.ok(code): return sys.monitoring.DISABLE
        self.cur.add((code, ln))

def mutate(rng, data, corpus, dictionary, max_len):
    d = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 4, 8])):
        op = rng.randrange(9)
        if op == 0 and d:
            i = rng.randrange(len(d)); d[i] ^= 1 << rng.randrange(8)
        elif op == 1 and d:
            i = rng.randrange(len(d)); d[i] = rng.randrange(256)
        elif op == 2:
            i = rng.randrange(len(d) + 1); d[i:i] = bytes([rng.choice(b"<>&;\"'\\()[]{}=,:@!#-/ \r\n\t%?.0a\x00\x80\xff")])
        elif op == 3 and d:
            i = rng.randrange(len(d)); j = min(len(d), i + rng.randrange(1, 9)); del d[i:j]
        elif op == 4 and dictionary:
            i = rng.randrange(len(d) + 1); d[i:i] = rng.choice(dictionary)
        elif op == 5 and d:
            i = rng.randrange(len(d)); j = min(len(d), i + rng.randrange(1, 17)); k = rng.randrange(len(d) + 1); d[k:k] = d[i:j]
        elif op == 6:
            o = rng.choice(corpus)
            if o:
                i = rng.randrange(len(o)); j = min(len(o), i + rng.randrange(1, 33)); k = rng.randrange(len(d) + 1); d[k:k] = o[i:j]
        elif op == 7 and d:
            i = rng.randrange(len(d)); d[i] = rng.randrange(32, 127)
        elif op == 8 and d:
            i = rng.randrange(len(d)); j = min(len(d), i + rng.randrange(1, 5)); d[i:j] = d[i:j] * rng.randrange(2, 20)
    return bytes(d[:max_len])

def fuzz(tgt, n, seed=0, verbose=True, stop_first=False):
    rng = random.Random(seed)
    from assay.target import resolve_source
    cov = Cov(tgt.source_paths())
    seen = set(); corpus = []; findings = {}
    dictionary = list(tgt.dictionary)
    def run(data):
        cov.cur = set(); sink = observe.FeatureSink(); prev = observe.activate(sink)
        v = None
        try:
            tgt(data)
        except BaseException as e:
            v = classify(e, tgt.expected)
        finally:
            observe.activate(prev)
        keys = cov.cur | set(sink.keys)
        return v, keys
    t0 = time.time()
    for i, s in enumerate(list(tgt.seeds) or [b""]):
        v, keys = run(s)
        if v: findings.setdefault(v.signature, (0, s, v))
        seen |= keys; corpus.append(s)
    for i in range(n):
        data = mutate(rng, rng.choice(corpus), corpus, dictionary, tgt.max_len)
        v, keys = run(data)
        if v and v.signature not in findings:
            findings[v.signature] = (i, data, v)
            if verbose: print(f"[{tgt.name}] case {i}: {v.signature}\n   {data[:300]!r}\n   {v.detail[:300]}", flush=True)
            if stop_first: break
        if not keys <= seen:
            seen |= keys; corpus.append(data)
    sys.monitoring.set_events(TOOL, 0); sys.monitoring.free_tool_id(TOOL)
    if verbose: print(f"[{tgt.name}] {n} cases in {time.time()-t0:.1f}s corpus={len(corpus)} findings={len(findings)}", flush=True)
    return findings

if __name__ == "__main__":
    path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    load(path)
    fuzz(REGISTRY.get(name), n, seed)

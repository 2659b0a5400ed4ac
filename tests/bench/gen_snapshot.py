#!/usr/bin/env python3
"""Writes a training-shaped memory snapshot with Python's own pickle, the way torch does.

torch.cuda.memory._dump_snapshot() is `pickle.dump(torch.cuda.memory._snapshot(), f)`, with
the default protocol (4 up to Python 3.13, 5 on 3.14). This script builds the dict that
_snapshot() returns for a simulated training loop, with the object identity that
THCPModule_memorySnapshot and py_symbolize give it, and hands it to the same pickle.dump.
Object identity decides the opcode stream (memoized once, then BINGET), so it is reproduced:

- every key is one str object (`py::str size_s = "size"` ...), and so are the action and
  state strings and 'large'/'small'; an empty frames list is one shared list;
- frame dicts {name, filename, line} are deduplicated by code location and shared; their
  strings are fresh objects per frame (pybind11 casts each std::string anew);
- one frames list per captured traceback: an allocation's alloc, free_requested and
  free_completed events, the segment_alloc it caused and its block share that list; the next
  allocation gets a fresh list even when its stack is the same (--list-per-event: every
  event gets a fresh list, the shape of the held-out file of issue 18);
- per event, compile_context and user_metadata are fresh str objects ("N/A" is written out
  every time; "" is CPython's one empty string, so it is memoized once);
- segment_pool_id is a fresh tuple per segment; key order is the producer's (frames last
  when a context was recorded).

Torch sources: pytorch/pytorch torch/csrc/cuda/Module.cpp (THCPModule_memorySnapshot),
torch/csrc/profiler/python/combined_traceback.cpp (py_symbolize),
torch/csrc/profiler/combined_traceback.cpp (symbolize: frames deduplicated by (code, lasti)
and C++ frames by instruction pointer), torch/cuda/memory.py (_dump_snapshot: pickle.dump).

The simulated job: `--layers` transformer layers, each iteration a forward pass (activations
kept, temporaries freed), a backward pass (activations freed, gradients created on the first
iteration) and an optimizer step (states created on the first step). Slots are reused every
iteration, as the caching allocator reuses blocks, so the final segments agree with the trace.
The trace stops after exactly `--events` events.

usage: gen_snapshot.py OUT [--events N] [--depth D] [--stacks S] [--variants V] [--cpp] [--compile-context]
                           [--user-metadata] [--oom] [--list-per-event] [--layers L] [--seed N]
                           [--protocol P]
"""
import argparse
import pickle
import random
import sys

MIB = 1 << 20

# Keys and enum-like values: one object each, as the producer's py::str constants.
ACTION, ADDR, SIZE, STREAM, TIME_US = "action", "addr", "size", "stream", "time_us"
COMPILE_CONTEXT, USER_METADATA, FRAMES, DEVICE_FREE = "compile_context", "user_metadata", "frames", "device_free"
NAME, FILENAME, LINE = "name", "filename", "line"


def fresh(s):
    """A new str object with the text of s (as PyUnicode_DecodeUTF8 makes one per call)."""
    return s.encode().decode()


class stacks:
    """`count` distinct call stacks of `depth` frames, innermost first; frame dicts shared."""

    INNER = {  # the user frame that gives a stack its category
        "parameter": ("reset_parameters", "/home/user/project/model/layers.py"),
        "activation": ("forward", "/home/user/project/model/layers.py"),
        "gradient": ("backward", "/usr/lib/python3/site-packages/torch/autograd/__init__.py"),
        "optimizer": ("_init_group", "/usr/lib/python3/site-packages/torch/optim/adamw.py"),
        "temporary": ("forward", "/home/user/project/model/attention.py"),
    }
    OUTER = [("train_step", "/home/user/project/train.py", 211),
             ("train", "/home/user/project/train.py", 402),
             ("main", "/home/user/project/train.py", 511),
             ("<module>", "/home/user/project/train.py", 530)]
    MID = [("_call_impl", "/usr/lib/python3/site-packages/torch/nn/modules/module.py"),
           ("_wrapped_call_impl", "/usr/lib/python3/site-packages/torch/nn/modules/module.py"),
           ("forward", "/home/user/project/model/transformer.py"),
           ("forward", "/home/user/project/model/block.py"),
           ("checkpoint", "/usr/lib/python3/site-packages/torch/utils/checkpoint.py"),
           ("decorate_context", "/usr/lib/python3/site-packages/torch/utils/_contextlib.py")]
    CPP = ["torch::unwind::unwind()",
           "torch::CapturedTraceback::gather(bool, bool, bool)",
           "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
           "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned long, CUstream_st*)",
           "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
           "at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)",
           "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, std::optional<c10::MemoryFormat>)",
           "at::native::mm_out_cuda(at::Tensor const&, at::Tensor const&, at::Tensor&)",
           "c10::impl::BoxedKernelWrapper<at::Tensor (at::Tensor const&, at::Tensor const&), void>::call(c10::BoxedKernel const&, c10::OperatorHandle const&, c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)",
           "torch::autograd::THPVariable_matmul(_object*, _object*, _object*)",
           "cfunction_call", "_PyObject_MakeTpCall", "PyObject_Vectorcall"]
    EVAL = "_PyEval_EvalFrameDefault"

    def __init__(self, count, depth, cpp, variants):
        self.depth = depth
        self.count = count
        self.variants = max(2, variants)
        self.cpp = cpp
        self.frames = {}  # (name, filename, line) -> the one shared frame dict
        self.cache = {}

    def frame(self, name, filename, line):
        key = (name, filename, line)
        f = self.frames.get(key)
        if f is None:
            f = {NAME: fresh(name), FILENAME: fresh(filename), LINE: line}
            self.frames[key] = f
        return f

    def python_frames(self, kind, j, n):
        """n Python frames for stack j of a kind. The middle frames are picked by j's digits
        in base `variants` (cycled over the levels, so every level varies); what the middle
        levels cannot tell apart goes into the line of the innermost (user) frame."""
        v = self.variants
        nouter = min(len(self.OUTER), max(0, n - 2))
        nmid = n - 1 - nouter
        ndig = 1
        while v ** ndig < self.count and ndig < nmid:
            ndig += 1
        ndig = min(ndig, nmid)
        mids = []
        for level in range(nmid):
            d = (j // v ** (level % ndig) + level) % v if ndig else 0
            mname, mfile = self.MID[level % len(self.MID)]
            mids.append(self.frame(mname, mfile, 100 + level * 64 + d))
        rest = j // v ** ndig if ndig else j
        name, filename = self.INNER[kind]
        outer = [self.frame(*o) for o in self.OUTER[len(self.OUTER) - nouter:]]
        return [self.frame(name, filename, 40 + rest * 7)] + mids + outer

    def frames_for(self, kind, j):
        """The frame dicts of stack j (its kind is a function of j)."""
        got = self.cache.get(j)
        if got is not None:
            return got
        if not self.cpp:
            got = self.python_frames(kind, j, self.depth)
        else:
            got = self.mixed_frames(kind, j)
        self.cache[j] = got
        return got


    GLUE = ["_PyFunction_Vectorcall", "PyObject_Call", "method_vectorcall", "slot_tp_call",
            "_PyObject_Call_Prepend"]

    def mixed_frames(self, kind, j):
        """stacks="all": the unwound C++ frames, innermost first, with each Python frame put
        before an interpreter frame (symbolize() in combined_traceback.cpp); Python frames
        left over go last."""
        npy = max(1, self.depth // 3)
        py = self.python_frames(kind, j, npy)
        left = self.depth - npy
        cpp = [self.frame(c, "??" if i % 3 else "", 0) for i, c in enumerate(self.CPP[:max(0, min(len(self.CPP), left - npy))])]
        left -= len(cpp)
        evals = min(npy, left)
        left -= evals
        for e in range(evals):
            cpp.append(self.EVAL)
            for g in range(left // evals + (1 if e < left % evals else 0)):
                cpp.append(self.frame(self.GLUE[g % len(self.GLUE)], "??", 0))
        out = []
        pi = 0
        for c in cpp:
            if c is self.EVAL:
                out.append(py[pi])
                pi += 1
                c = self.frame(self.EVAL, "??", 0)
            out.append(c)
        out.extend(py[pi:])
        return out


class job:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.st = stacks(a.stacks, a.depth, a.cpp, a.variants)
        self.it = 0
        self.empty = []       # the one shared empty frames list
        self.trace = []
        self.time_us = 1757253256033154
        self.next_addr = 0x7F0000000000
        self.segments = []    # [address, [slot...], frames list, kind]
        self.slots = []       # per slot: dict(size, req, seg, offset, live frames list or None)
        self.alloc_count = 0
        self.metadata = ""
        self.layout()

    # ---- layout: slots grouped into segments ----------------------------------------------
    def add_segment(self, sizes, kind):
        seg = {"address": None, "slots": [], "kind": kind, "frames": None}
        off = 0
        for s in sizes:
            size = (s + 511) // 512 * 512
            slot = {"size": size, "seg": seg, "offset": off, "live": None, "kind": kind,
                    "n": len(self.slots)}
            off += size
            seg["slots"].append(slot)
            self.slots.append(slot)
        seg["total"] = off
        self.segments.append(seg)
        return seg["slots"]

    def layout(self):
        a = self.a
        r = self.rng
        h = 4096
        self.params, self.grads, self.states, self.acts, self.temps = [], [], [], [], []
        for _ in range(a.layers):
            sizes = [h * h * 2, h * h * 2, h * 4 * h * 2, h * 2]
            self.params.append(self.add_segment(sizes, "parameter"))
            self.grads.append(self.add_segment(sizes, "gradient"))
            self.states.append(self.add_segment([s * 2 for s in sizes] * 2, "optimizer"))
            self.acts.append(self.add_segment([r.randint(8, 64) * MIB for _ in range(8)], "activation"))
            self.temps.append(self.add_segment([r.randint(1, 16) * MIB for _ in range(3)] +
                                               [r.randint(1, 512) * 1024], "temporary"))

    # ---- events ----------------------------------------------------------------------------
    def full(self):  # with --oom the last event is the oom
        return len(self.trace) >= self.a.events - (1 if self.a.oom else 0)

    def entry(self, action, addr, size, frames):
        e = {ACTION: action, ADDR if action != "oom" else DEVICE_FREE: addr, SIZE: size,
             STREAM: 0, TIME_US: self.time_us}
        self.time_us += self.rng.randint(1, 50)
        if self.a.compile_context:
            e[COMPILE_CONTEXT] = fresh("Torch-Compiled Region: 0/1" if self.compiled else "N/A")
        if self.a.user_metadata:
            e[USER_METADATA] = fresh(self.metadata) if self.metadata else ""
        if frames is not None:
            e[FRAMES] = list(frames) if self.a.list_per_event and frames else frames
        self.trace.append(e)

    def addr(self, slot):
        return slot["seg"]["address"] + slot["offset"]

    # Call sites: each slot is allocated from up to 4 places (forward, backward, optimizer step,
    # first use). The job has `--stacks` distinct stacks; a site's stack varies with the
    # iteration with a period of stacks // sites iterations, so the allocation sequence of a
    # step repeats, as a training loop's does.
    def stack_of(self, slot, phase):
        sites = 4 * len(self.slots)
        c = 4 * slot["n"] + phase
        s = self.a.stacks
        j = (self.it % (s // sites)) * sites + c if s >= sites else c % s
        return self.slots[(j % sites) // 4]["kind"], j

    def alloc(self, slot, phase):
        if self.full():
            return
        frames = list(self.st.frames_for(*self.stack_of(slot, phase)))  # a fresh list per traceback
        seg = slot["seg"]
        if seg["address"] is None:
            seg["address"] = self.next_addr
            self.next_addr += (seg["total"] + 2 * MIB - 1) // (2 * MIB) * (2 * MIB) + 64 * MIB
            seg["frames"] = frames
            self.entry("segment_alloc", seg["address"], seg["total"], frames)
            if self.full():
                return
        slot["req"] = slot["size"] - self.rng.randint(0, 511)
        slot["live"] = frames
        self.entry("alloc", self.addr(slot), slot["size"], frames)

    def free(self, slot):
        if slot["live"] is None:
            return
        for action in ("free_requested", "free_completed"):
            if self.full():
                return
            self.entry(action, self.addr(slot), slot["size"], slot["live"])
        slot["live"] = None

    def run(self):
        a = self.a
        self.it = 0
        self.compiled = False
        fwd, bwd, opt, init = 0, 1, 2, 3
        while not self.full():
            self.metadata = "forward" if a.user_metadata else ""
            self.compiled = a.compile_context and self.it % 2 == 1
            for layer in range(a.layers):
                for s in self.acts[layer]:
                    self.alloc(s, fwd)
                for s in self.temps[layer]:
                    self.alloc(s, fwd)
                    self.free(s)
                if self.it == 0:
                    for s in self.params[layer]:
                        self.alloc(s, init)
            self.metadata = "backward" if a.user_metadata else ""
            self.compiled = False
            for layer in reversed(range(a.layers)):
                for s in self.temps[layer][:2]:
                    self.alloc(s, bwd)
                for s in self.grads[layer]:
                    if s["live"] is None:
                        self.alloc(s, bwd)
                for s in reversed(self.acts[layer]):
                    self.free(s)
                for s in self.temps[layer][:2]:
                    self.free(s)
            self.metadata = "optimizer" if a.user_metadata else ""
            for layer in range(a.layers):
                for s in self.states[layer]:
                    if s["live"] is None:
                        self.alloc(s, init)
                s = self.temps[layer][0]
                self.alloc(s, opt)
                self.free(s)
            self.it += 1
        if a.oom:  # the next activation does not fit: 2 GiB requested, 512 MiB free on the device
            self.entry("oom", 512 * MIB, 2048 * MIB, list(self.st.frames_for(*self.stack_of(self.acts[0][0], fwd))))

    # ---- the snapshot dict -------------------------------------------------------------------
    def snapshot(self):
        segments = []
        for seg in self.segments:
            if seg["address"] is None:
                continue
            blocks = []
            addr = seg["address"]
            alloc = active = req = 0
            free_run = None
            for slot in seg["slots"]:
                if slot["live"] is not None:
                    free_run = None
                    blocks.append({"address": addr, SIZE: slot["size"], "requested_size": slot["req"],
                                   "state": "active_allocated", FRAMES: slot["live"]})
                    alloc += slot["size"]
                    req += slot["req"]
                elif free_run is not None:  # adjacent free blocks are one block
                    free_run[SIZE] += slot["size"]
                    free_run["requested_size"] += slot["size"]
                else:
                    free_run = {"address": addr, SIZE: slot["size"], "requested_size": slot["size"],
                                "state": "inactive", FRAMES: self.empty}
                    blocks.append(free_run)
                addr += slot["size"]
            active = alloc
            d = {"device": 0, "address": seg["address"], "total_size": seg["total"],
                 "allocated_size": alloc, "active_size": active, "requested_size": req,
                 STREAM: 0, "segment_type": "large" if seg["total"] > MIB else "small",
                 "segment_pool_id": (self.zero, self.zero), "is_expandable": False}
            d["blocks"] = blocks
            d[FRAMES] = seg["frames"]  # inserted last: py_symbolize fills it after the walk
            segments.append(d)
        conf = "expandable_segments:False"
        settings = {"PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": -1,
                    "garbage_collection_threshold": 0.0, "expandable_segments": False,
                    "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                    "pinned_use_cuda_host_register": False,
                    "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}}
        return {"segments": segments, "device_traces": [self.trace],
                "allocator_settings": settings, "external_annotations": []}

    zero = 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--events", type=int, default=1_000_000, help="trace events (100k to 3M)")
    p.add_argument("--depth", type=int, default=35, help="frames per stack (5 to 80)")
    p.add_argument("--stacks", type=int, default=2000, help="distinct call stacks (1 to 200k)")
    p.add_argument("--variants", type=int, default=16, help="distinct frames per stack level")
    p.add_argument("--cpp", action="store_true", help='C++ frames too (stacks="all")')
    p.add_argument("--compile-context", action="store_true", help="compile_context in entries (2.7+)")
    p.add_argument("--user-metadata", action="store_true", help="user_metadata in entries (2.9+)")
    p.add_argument("--oom", action="store_true", help="the last event is an oom")
    p.add_argument("--list-per-event", action="store_true",
                   help="a fresh frames list for every event, not one per allocation")
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--protocol", type=int, default=pickle.DEFAULT_PROTOCOL)
    a = p.parse_args(argv)
    if a.events < 1 or a.depth < 1 or a.stacks < 1 or a.layers < 1:
        p.error("--events, --depth, --stacks and --layers must be positive")
    j = job(a)
    j.run()
    snap = j.snapshot()
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=a.protocol)
    distinct = len({id(e[FRAMES]) for e in j.trace if FRAMES in e})
    print(f"gen_snapshot: {a.out}: {len(j.trace)} events, {len(snap['segments'])} segments, "
          f"{len(j.st.frames)} frames, {len(j.st.cache)} distinct stacks, {distinct} frame lists",
          file=sys.stderr)


if __name__ == "__main__":
    main()

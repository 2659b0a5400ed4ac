// Writes a training-shaped memory snapshot pickle (protocol 4) of a requested size, streaming,
// with the object sharing of torch.cuda.memory._dump_snapshot: every dict key is one memoized
// string, frame dicts are memoized and referenced again with BINGET/LONG_BINGET, each trace
// event gets a fresh frames list, lists are written in batches of 1000 (APPENDS), and the
// stream is cut into FRAMEs of about 64 KiB at opcode boundaries, as CPython's pickler does.
//
// usage: gen_big_snapshot OUT.pickle SIZE_MB [seed]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

class emitter {
public:
    explicit emitter(std::FILE* f) : m_f(f) {}
    void begin() {
        std::fputc(0x80, m_f);
        std::fputc(4, m_f);
        m_written = 2;
    }
    void end() {
        op('.');
        commit();
    }
    std::uint64_t written() const { return m_written + m_cur.size(); }

    void op(char c) { m_cur.push_back(c); }
    void boundary() {
        if (m_cur.size() >= 65536) commit();
    }
    std::uint32_t memoize() {
        op(char(0x94));
        return m_memo++;
    }
    void get(std::uint32_t id) {
        if (id < 256) {
            op('h');
            op(char(id));
        } else {
            op('j');
            u32(id);
        }
    }
    void str(const std::string& s) {
        if (s.size() < 256) {
            op(char(0x8c));
            op(char(s.size()));
        } else {
            op('X');
            u32(static_cast<std::uint32_t>(s.size()));
        }
        m_cur.append(s);
    }
    // A string object shared by value (keys, enum-like values): memoized once.
    void shared_str(const std::string& s) {
        auto it = m_strings.find(s);
        if (it != m_strings.end()) return get(it->second);
        str(s);
        m_strings.emplace(s, memoize());
    }
    void integer(std::int64_t v) {
        if (v >= 0 && v < 256) {
            op('K');
            op(char(v));
        } else if (v >= 0 && v < 65536) {
            op('M');
            op(char(v & 255));
            op(char(v >> 8));
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            op('J');
            u32(static_cast<std::uint32_t>(v));
        } else {
            unsigned char b[8];
            int n = 0;
            std::uint64_t x = static_cast<std::uint64_t>(v);
            for (n = 0; n < 8; ++n) b[n] = static_cast<unsigned char>(x >> (8 * n));
            n = 8;
            while (n > 1 && ((b[n - 1] == 0 && !(b[n - 2] & 0x80)) ||
                             (b[n - 1] == 0xff && (b[n - 2] & 0x80))))
                --n;
            op(char(0x8a));
            op(char(n));
            for (int i = 0; i < n; ++i) op(char(b[i]));
        }
    }

private:
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) op(char((v >> (8 * i)) & 255));
    }
    void commit() {
        if (m_cur.empty()) return;
        std::fputc(0x95, m_f);
        std::uint64_t n = m_cur.size();
        for (int i = 0; i < 8; ++i) std::fputc(int((n >> (8 * i)) & 255), m_f);
        std::fwrite(m_cur.data(), 1, m_cur.size(), m_f);
        m_written += 9 + m_cur.size();
        m_cur.clear();
    }
    std::FILE* m_f;
    std::string m_cur;
    std::uint64_t m_written = 0;
    std::uint32_t m_memo = 0;
    std::unordered_map<std::string, std::uint32_t> m_strings;
};

struct frame_def {
    std::string name, filename;
    int line;
    std::int64_t memo = -1;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s OUT.pickle SIZE_MB [seed]\n", argv[0]);
        return 2;
    }
    const std::uint64_t target = std::strtoull(argv[2], nullptr, 10) << 20;
    std::mt19937_64 rng(argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1);
    std::FILE* f = std::fopen(argv[1], "wb");
    if (!f) {
        std::perror(argv[1]);
        return 2;
    }
    emitter e(f);

    // Unique frames: user code, torch internals, a few C++ frames.
    std::vector<frame_def> frames;
    for (int i = 0; i < 400; ++i)
        frames.push_back({"forward", "/home/user/project/model/block_" + std::to_string(i % 40) + ".py", 10 + i});
    for (int i = 0; i < 300; ++i)
        frames.push_back({"_call_impl", "/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1500 + i});
    for (int i = 0; i < 200; ++i)
        frames.push_back({"train_step_" + std::to_string(i % 20), "/home/user/project/train.py", 100 + i});
    for (int i = 0; i < 100; ++i)
        frames.push_back({"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)" + std::to_string(i), "??", 0});
    // Call stacks (templates): 15..40 frames, innermost first.
    std::vector<std::vector<int>> stacks(600);
    for (auto& s : stacks) {
        int depth = 15 + static_cast<int>(rng() % 26);
        for (int d = 0; d < depth; ++d) s.push_back(static_cast<int>(rng() % frames.size()));
    }
    auto emit_frames_list = [&](const std::vector<int>& st) {
        e.op(']');
        e.memoize();
        if (st.empty()) return;
        e.op('(');
        for (int id : st) {
            frame_def& fr = frames[id];
            if (fr.memo >= 0) {
                e.get(static_cast<std::uint32_t>(fr.memo));
            } else {
                e.op('}');
                fr.memo = e.memoize();
                e.op('(');
                e.shared_str("name");
                e.shared_str(fr.name);
                e.shared_str("filename");
                e.shared_str(fr.filename);
                e.shared_str("line");
                e.integer(fr.line);
                e.op('u');
            }
        }
        e.op('e');
    };

    e.begin();
    e.op('}');
    e.memoize();
    e.op('(');
    // segments: 2000 segments of 1..16 blocks, shared block stacks.
    e.shared_str("segments");
    e.op(']');
    e.memoize();
    std::int64_t base = 0x7f0000000000;
    const int nseg = 2000;
    std::vector<std::uint32_t> shared_lists;
    for (int s = 0; s < nseg; ++s) {
        if (s % 1000 == 0) e.op('(');
        int nblocks = 1 + static_cast<int>(rng() % 16);
        std::int64_t bsize = 2 << 20;
        e.op('}');
        e.memoize();
        e.op('(');
        e.shared_str("device"); e.integer(0);
        e.shared_str("address"); e.integer(base);
        e.shared_str("total_size"); e.integer(bsize * nblocks);
        e.shared_str("allocated_size"); e.integer(bsize * (nblocks / 2));
        e.shared_str("active_size"); e.integer(bsize * (nblocks / 2));
        e.shared_str("requested_size"); e.integer(nblocks >= 2 ? bsize * (nblocks / 2) - 100 : 0);
        e.shared_str("stream"); e.integer(0);
        e.shared_str("segment_type"); e.shared_str("large");
        e.shared_str("segment_pool_id"); e.integer(0); e.integer(0); e.op(char(0x86)); e.memoize();
        e.shared_str("is_expandable"); e.op(char(0x89));
        e.shared_str("frames"); e.op(']'); e.memoize();
        e.shared_str("blocks");
        e.op(']');
        e.memoize();
        e.op('(');
        for (int b = 0; b < nblocks; ++b) {
            bool alloc = b < nblocks / 2;
            e.op('}');
            e.memoize();
            e.op('(');
            e.shared_str("address"); e.integer(base + b * bsize);
            e.shared_str("size"); e.integer(bsize);
            e.shared_str("requested_size"); e.integer(alloc ? bsize - (b == 0 ? 100 : 0) : bsize);
            e.shared_str("state"); e.shared_str(alloc ? "active_allocated" : "inactive");
            e.shared_str("frames");
            emit_frames_list(alloc ? stacks[rng() % stacks.size()] : std::vector<int>{});
            e.op('u');
        }
        e.op('e');
        e.op('u');
        if (s % 1000 == 999 || s == nseg - 1) e.op('e');
        base += bsize * nblocks + (64 << 20);
        e.boundary();
    }
    // device_traces: one device with events until the file reaches the target size.
    e.shared_str("device_traces");
    e.op(']');
    e.memoize();
    e.op(']');
    e.memoize();
    static const char* actions[] = {"alloc", "free_requested", "free_completed"};
    std::int64_t t = 1757253256033154;
    std::uint64_t n = 0;
    std::vector<std::int64_t> live;
    while (e.written() + 4096 < target) {
        if (n % 1000 == 0) e.op('(');
        int a = static_cast<int>(n % 3);
        if (a == 0) live.push_back(base + static_cast<std::int64_t>(rng() % (1 << 30)) * 512);
        std::int64_t addr = live.empty() ? base : live.back();
        if (a == 2 && !live.empty()) live.pop_back();
        e.op('}');
        e.memoize();
        e.op('(');
        e.shared_str("action"); e.shared_str(actions[a]);
        e.shared_str("addr"); e.integer(addr);
        e.shared_str("size"); e.integer(512 * (1 + static_cast<std::int64_t>(rng() % 100000)));
        e.shared_str("stream"); e.integer(0);
        e.shared_str("time_us"); e.integer(t += 1 + static_cast<std::int64_t>(rng() % 50));
        e.shared_str("frames"); emit_frames_list(stacks[rng() % stacks.size()]);
        e.shared_str("compile_context"); e.shared_str("N/A");
        e.shared_str("user_metadata"); e.shared_str("");
        e.op('u');
        if (n % 1000 == 999) e.op('e');
        ++n;
        e.boundary();
    }
    if (n % 1000 != 0) e.op('e');
    e.op('a');  // the one device list into device_traces
    e.shared_str("allocator_settings");
    e.op('}');
    e.memoize();
    e.op('(');
    e.shared_str("PYTORCH_CUDA_ALLOC_CONF"); e.shared_str("expandable_segments:False");
    e.shared_str("max_split_size"); e.integer(-1);
    e.shared_str("expandable_segments"); e.op(char(0x89));
    e.op('u');
    e.op('u');
    e.end();
    std::fclose(f);
    std::fprintf(stderr, "wrote %s: %llu bytes, %d segments, %llu trace entries\n", argv[1],
                 static_cast<unsigned long long>(e.written()), nseg,
                 static_cast<unsigned long long>(n));
    return 0;
}

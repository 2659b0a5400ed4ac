// analyze(): overview per device from the segments, live attribution, then trace replay and
// patterns (analysis_trace.cpp, patterns.cpp).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "parsers/snapshot/analysis_internal.h"
#include "parsers/snapshot/snapshot_analysis.h"
#include "parsers/snapshot/text_pairs.h"

namespace oomdx::snap {

namespace detail {

namespace {

// A frame's filename and name with their byte pairs (text_pairs): most searches end there.
struct frame_texts {
    std::string_view filename, name;
    text_pairs filename_p, name_p;
    explicit frame_texts(const frame_text& t)
        : filename(t.filename), name(t.name), filename_p(t.filename), name_p(t.name) {}
    bool in_filename(std::string_view part) const { return filename_p.contains(filename, part); }
    bool in_name(std::string_view part) const { return name_p.contains(name, part); }
};

// Backward, optimizer-step and generation-loop frames (rev28). Backward: autograd's entry points (Python
// frames of torch/autograd, or a function named backward); optimizer: a step under an optimizer package;
// generation: transformers' generate() loop, or an inference engine's package (vLLM, SGLang, FlexGen, TGI).
std::uint8_t code_kind_flags(const frame_texts& t) {
    std::uint8_t f = 0;
    if (!is_python_frame(t.filename)) return f;
    f |= k_flag_stack;
    if (t.in_filename("/torch/autograd/") || t.name == "backward" || t.name == "_engine_run_backward" ||
        t.name == "run_backward")
        f |= k_flag_backward;
    if ((t.in_filename("/torch/optim/") || t.in_filename("/torch_npu/optim/") || t.in_filename("/apex/optimizers/") ||
         t.in_filename("/megatron/core/optimizer/") || t.in_filename("/deepspeed/ops/adam/") ||
         t.in_filename("/bitsandbytes/optim/")) &&
        (t.in_name("step") || t.name == "_init_group"))
        f |= k_flag_optimizer;
    if (t.name == "optimizer_step") f |= k_flag_optimizer;
    if ((t.in_filename("/transformers/generation/") && (t.name == "generate" || t.name == "_sample" ||
                                                          t.name == "_beam_search" || t.name == "_assisted_decoding")) ||
        t.in_filename("/vllm/") || t.in_filename("/sglang/") || t.in_filename("/flexgen/") ||
        t.in_filename("/flexllmgen/") || t.in_filename("/text_generation_server/"))
        f |= k_flag_generate;
    return f;
}

}  // namespace

attribution::attribution(const snapshot& s, const category_rules& rules) : m_s(s), m_rules(rules) {
    m_text.resize(s.frames.size());
    for (std::size_t i = 0; i < s.frames.size(); ++i) {
        const frame& f = s.frames[i];
        m_text[i].name = f.name;
        m_text[i].line = f.line;
        if (f.filename.find('\\') != std::string_view::npos) {
            m_storage.push_back(normalize_filename(f.filename));
            m_text[i].filename = m_storage.back();
        } else {
            m_text[i].filename = f.filename;
        }
    }
    std::size_t lists = s.frame_list_count();
    m_cat.assign(std::max<std::size_t>(lists, 1), -1);
    m_site.assign(m_cat.size(), 0);
    m_flags.assign(m_cat.size(), 0);
    m_site_of_frame.assign(s.frames.size(), -1);
    m_finfo.assign(s.frames.size(), frame_info{});
    m_site_frame.push_back(-1);  // site 0: no stack
}

const attribution::frame_info& attribution::info(frame_id f) {
    frame_info& fi = m_finfo[f];
    if (fi.done) return fi;
    const frame_text& t = m_text[f];
    const category_rules::frame_classes c = m_rules.classes(t);
    fi.any_mask = c.any_mask;
    fi.frame_cat = static_cast<std::int16_t>(c.category);
    fi.python = is_python_frame(t.filename);
    fi.site_ok = c.site;
    const frame_texts x(t);
    if (x.in_filename("fully_sharded_data_parallel") || x.in_filename("/fsdp/")) fi.flags |= 1;
    if (x.in_filename("nn/parallel/distributed.py") || x.in_name("DistributedDataParallel")) fi.flags |= 2;
    fi.flags |= code_kind_flags(x);
    fi.done = 1;
    return fi;
}

void attribution::compute(frames_id id) {
    std::span<const frame_id> list;
    if (static_cast<std::size_t>(id) < m_s.frame_list_count()) list = m_s.frame_list(id);
    std::uint64_t any = 0;
    int cat = -1;
    std::uint8_t flags = 0;
    frame_id site = -1, first_python = -1, first = -1;
    std::size_t n = 0;
    for (frame_id f : list) {
        if (f < 0 || static_cast<std::size_t>(f) >= m_text.size()) continue;
        ++n;
        const frame_info& fi = info(f);
        any |= fi.any_mask;
        if (cat < 0 && fi.frame_cat >= 0) cat = fi.frame_cat;
        flags |= fi.flags;
        if (first < 0) first = f;
        if (first_python < 0 && fi.python) first_python = f;
        if (site < 0 && fi.site_ok) site = f;
    }
    if (n == 0) cat = cat_unknown;
    else if (m_rules.any_rule_count() > 64) {
        m_buf.clear();
        for (frame_id f : list)
            if (f >= 0 && static_cast<std::size_t>(f) < m_text.size()) m_buf.push_back(m_text[f]);
        cat = m_rules.classify(m_buf.data(), m_buf.size());
    } else if (any) cat = m_rules.any_category(__builtin_ctzll(any));
    else if (cat < 0) cat = cat_other;
    m_cat[id] = static_cast<std::int16_t>(cat);
    m_flags[id] = flags;
    frame_id fid = site >= 0 ? site : (first_python >= 0 ? first_python : first);
    if (fid < 0) {
        m_site[id] = 0;
        return;
    }
    if (m_site_of_frame[fid] < 0) {
        m_site_of_frame[fid] = static_cast<std::int32_t>(m_site_frame.size());
        m_site_frame.push_back(fid);
    }
    m_site[id] = m_site_of_frame[fid];
}

site_total attribution::describe_site(int site) const {
    site_total t;
    if (site <= 0 || static_cast<std::size_t>(site) >= m_site_frame.size()) {
        t.site = "<no stack>";
        return t;
    }
    const frame_text& f = m_text[m_site_frame[site]];
    t.file = std::string(f.filename.empty() ? "??" : f.filename);
    t.line = f.line;
    t.function = std::string(f.name);
    t.site = fmt::format("{}:{}:{}", t.file, t.line, t.function);
    return t;
}

std::vector<site_total> top_sites_of(const std::vector<std::int64_t>& bytes,
                                     const std::vector<std::int64_t>& blocks,
                                     const std::vector<int>& site_cat, attribution& attr,
                                     std::int64_t total, std::size_t limit) {
    std::vector<int> idx;
    for (std::size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] > 0) idx.push_back(static_cast<int>(i));
    std::size_t n = std::min(limit, idx.size());
    auto cmp = [&](int a, int b) { return bytes[a] != bytes[b] ? bytes[a] > bytes[b] : a < b; };
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(), cmp);
    std::vector<site_total> out;
    for (std::size_t k = 0; k < n; ++k) {
        int i = idx[k];
        site_total t = attr.describe_site(i);
        t.bytes = bytes[i];
        t.blocks = i < static_cast<int>(blocks.size()) ? blocks[i] : 0;
        t.share = total > 0 ? double(t.bytes) / double(total) : 0;
        if (i < static_cast<int>(site_cat.size()) && site_cat[i] >= 0)
            t.category = attr.rules().names()[site_cat[i]];
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace detail

namespace {

using detail::attribution;

// Overview, categories and sites from the final segments of one device.
void overview(const std::vector<const segment*>& segs, attribution& attr, device_analysis& d) {
    const auto& names = attr.rules().names();
    std::vector<std::int64_t> cat_bytes(names.size(), 0), cat_blocks(names.size(), 0);
    std::vector<std::int64_t> site_bytes, site_blocks, site_big;
    std::vector<int> site_cat;
    std::int64_t seg_alloc_field = 0, seg_active_field = 0, seg_requested_field = 0;
    std::int64_t bad_total = 0;
    for (const segment* sg : segs) {
        ++d.segments;
        if (sg->segment_type == "small") ++d.small_segments;
        else ++d.large_segments;
        if (sg->is_expandable) ++d.expandable_segments;
        if (sg->has_pool_id && (sg->pool_id_0 != 0 || sg->pool_id_1 != 0)) ++d.private_pool_segments;
        d.reserved_bytes += sg->total_size;
        seg_alloc_field += sg->allocated_size;
        seg_active_field += sg->active_size;
        seg_requested_field += sg->requested_size;
        std::int64_t block_sum = 0;
        for (const block& b : sg->blocks) {
            ++d.blocks;
            block_sum += b.size;
            switch (b.state) {
                case block_state::active_allocated: {
                    ++d.allocated_blocks;
                    d.allocated_bytes += b.size;
                    d.requested_bytes += b.requested_size;
                    d.largest_allocated_block_bytes = std::max(d.largest_allocated_block_bytes, b.size);
                    int c = attr.category(b.frames);
                    int s = attr.site(b.frames);
                    detail::note_code_kinds(d.measures, attr.flags(b.frames));
                    cat_bytes[c] += b.size;
                    ++cat_blocks[c];
                    if (static_cast<std::size_t>(s) >= site_bytes.size()) {
                        site_bytes.resize(s + 1, 0);
                        site_blocks.resize(s + 1, 0);
                        site_big.resize(s + 1, 0);
                        site_cat.resize(s + 1, -1);
                    }
                    site_bytes[s] += b.size;
                    ++site_blocks[s];
                    if (b.size > site_big[s]) {
                        site_big[s] = b.size;
                        site_cat[s] = c;
                    }
                    break;
                }
                case block_state::active_pending_free:
                    ++d.pending_free_blocks;
                    d.pending_free_bytes += b.size;
                    ++d.free_blocks;
                    if (b.size < (1 << 20)) ++d.small_free_blocks;
                    break;
                case block_state::inactive:
                    ++d.inactive_blocks;
                    d.inactive_bytes += b.size;
                    d.largest_inactive_block_bytes = std::max(d.largest_inactive_block_bytes, b.size);
                    ++d.free_blocks;
                    if (b.size < (1 << 20)) ++d.small_free_blocks;
                    break;
                case block_state::unknown:
                    break;
            }
        }
        if (!sg->blocks.empty() && block_sum != sg->total_size) ++bad_total;
    }
    d.active_bytes = d.allocated_bytes + d.pending_free_bytes;
    d.rounding_bytes = d.allocated_bytes - d.requested_bytes;
    d.small_free_block_share = d.free_blocks ? double(d.small_free_blocks) / double(d.free_blocks) : 0;
    d.fragmentation_rate =
        d.reserved_bytes > 0 ? 1.0 - double(d.allocated_bytes) / double(d.reserved_bytes) : 0;
    if (d.fragmentation_rate < 0) d.fragmentation_rate = 0;
    if (bad_total)
        d.inconsistencies.push_back(fmt::format(
            "{} segment(s) whose blocks do not add up to total_size", bad_total));
    if (seg_alloc_field != d.allocated_bytes)
        d.inconsistencies.push_back(fmt::format(
            "segment allocated_size sums to {} but active_allocated blocks to {}", seg_alloc_field,
            d.allocated_bytes));
    if (seg_active_field != d.active_bytes)
        d.inconsistencies.push_back(fmt::format(
            "segment active_size sums to {} but active blocks to {}", seg_active_field, d.active_bytes));

    for (std::size_t c = 0; c < names.size(); ++c) {
        category_total t;
        t.name = names[c];
        t.bytes = cat_bytes[c];
        t.blocks = cat_blocks[c];
        t.share = d.allocated_bytes > 0 ? double(t.bytes) / double(d.allocated_bytes) : 0;
        d.categories.push_back(std::move(t));
    }
    std::stable_sort(d.categories.begin(), d.categories.end(),
                     [](const category_total& a, const category_total& b) { return a.bytes > b.bytes; });
    d.sites = detail::top_sites_of(site_bytes, site_blocks, site_cat, attr, d.allocated_bytes,
                                   site_bytes.size());
}

}  // namespace

snapshot_analysis analyze(const snapshot& s, const analysis_options& opt) {
    snapshot_analysis a;
    a.file = s.source_file;
    a.info = s.info;
    a.device_capacity_bytes = opt.device_capacity_bytes;
    std::unique_ptr<category_rules> own;
    const category_rules* rules = opt.rules;
    if (!rules) {
        own = std::make_unique<category_rules>(category_rules::shipped());
        rules = own.get();
    }
    a.category_names = rules->names();
    if (s.allocator_settings.is_object()) {
        auto it = s.allocator_settings.find("PYTORCH_CUDA_ALLOC_CONF");
        if (it != s.allocator_settings.end() && it->is_string()) a.alloc_conf = it->get<std::string>();
        auto ex = s.allocator_settings.find("expandable_segments");
        if (ex != s.allocator_settings.end() && ex->is_boolean()) a.expandable_segments = ex->get<bool>();
    }
    for (const auto& sg : s.segments)
        if (sg.is_expandable) a.expandable_segments = true;

    attribution attr(s, *rules);
    std::map<std::int64_t, std::vector<const segment*>> by_device;
    for (const auto& sg : s.segments) by_device[sg.device].push_back(&sg);
    for (std::int64_t dev : s.devices()) by_device[dev];
    for (std::size_t i = 0; i < s.device_traces.size(); ++i)
        if (!s.device_traces[i].empty()) by_device[static_cast<std::int64_t>(i)];

    static const trace_list k_empty;
    for (auto& [dev, segs] : by_device) {
        device_analysis d;
        d.device = dev;
        overview(segs, attr, d);
        const auto& trace = (dev >= 0 && static_cast<std::size_t>(dev) < s.device_traces.size())
                                ? s.device_traces[dev]
                                : k_empty;
        detail::replay_extras x;
        detail::replay_trace(s, trace, segs, attr, opt, d, x);
        if (d.oom_count > 0) detail::replay_free_blocks(trace, segs, d);
        if (!d.ooms.empty() && opt.device_capacity_bytes > 0) {
            const oom_event& o = d.ooms.back();
            if (o.device_free_bytes >= 0)
                d.non_pytorch_gap_bytes =
                    std::max<std::int64_t>(0, opt.device_capacity_bytes - o.device_free_bytes - o.reserved_bytes);
        }
        for (auto& o : d.ooms) {
            if (o.largest_inactive_block_bytes >= 0 && o.inactive_bytes >= 0)
                o.fragmentation = o.requested_bytes > o.largest_inactive_block_bytes &&
                                  o.inactive_bytes >= o.requested_bytes;
        }
        a.devices.push_back(std::move(d));
        detail::describe_patterns(a, a.devices.back(), x, opt);
    }
    for (std::size_t i = 0; i < a.devices.size(); ++i) {
        const auto& d = a.devices[i];
        if (a.primary < 0) {
            a.primary = static_cast<int>(i);
            continue;
        }
        const auto& p = a.devices[a.primary];
        if (d.reserved_bytes > p.reserved_bytes ||
            (d.reserved_bytes == p.reserved_bytes && d.peak_bytes > p.peak_bytes))
            a.primary = static_cast<int>(i);
    }
    for (const auto& d : a.devices)
        for (const auto& w : d.inconsistencies)
            a.warnings.push_back(fmt::format("device {}: {}", d.device, w));
    return a;
}

}  // namespace oomdx::snap

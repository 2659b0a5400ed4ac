// HTML report: escaping, sections, charts with shapes, no scripts or network references.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "engine/core/vocabulary.h"
#include "engine/report/diagnosis.h"
#include "engine/report/render_html.h"
#include "parsers/snapshot/analysis_batch.h"

using namespace oomdx;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
    return n;
}

// Every <svg class="chart"> has at least one shape before its </svg>.
void check_charts(const std::string& html) {
    std::size_t pos = 0;
    while ((pos = html.find("<svg class=\"chart\"", pos)) != std::string::npos) {
        const auto end = html.find("</svg>", pos);
        REQUIRE(end != std::string::npos);
        const std::string body = html.substr(pos, end - pos);
        CHECK((body.find("<rect") != std::string::npos || body.find("<polyline") != std::string::npos ||
               body.find("<circle") != std::string::npos));
        pos = end;
    }
}

void check_self_contained(const std::string& html) {
    // No URL of any scheme (the only "http" is the http-equiv of the CSP meta tag).
    CHECK(html.find("http:") == std::string::npos);
    CHECK(html.find("https:") == std::string::npos);
    CHECK(html.find("url(") == std::string::npos);
    CHECK(html.find("//") == std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("</html>") != std::string::npos);
}

const std::string evil = "<script>alert('x')</script> & \"q\"";

snap::snapshot_analysis make_snapshot() {
    snap::snapshot_analysis a;
    a.file = "rank0<b>.pickle";
    a.primary = 0;
    a.device_capacity_bytes = 80LL << 30;
    a.category_names = {"parameter", "activation", "other"};
    snap::device_analysis d;
    d.reserved_bytes = 60LL << 30;
    d.allocated_bytes = 40LL << 30;
    d.inactive_bytes = 18LL << 30;
    d.pending_free_bytes = 2LL << 30;
    d.largest_inactive_block_bytes = 1LL << 30;
    d.fragmentation_rate = 1.0 / 3;
    d.fragmentation_level = "severe";
    d.categories = {{"parameter", 16LL << 30, 10, 0.4}, {"activation", 24LL << 30, 100, 0.6}};
    d.sites = {{evil, "a.py", 3, "f", "activation", 20LL << 30, 50, 0.5}};
    d.has_trace = true;
    d.trace_entries = 5000000;
    d.peak_bytes = 70LL << 30;
    d.peak_index = 3000000;
    d.peak_reserved_bytes = 72LL << 30;
    d.peak_categories = {{"activation", 50LL << 30, 10, 0.7}};
    d.peak_sites = d.sites;
    for (int i = 0; i < 16; ++i) {
        snap::timeline_slice s;
        s.start_index = i * 312500;
        s.end_index = (i + 1) * 312500;
        s.live_end_bytes = (10LL + i * 3) << 30;
        d.timeline.push_back(s);
    }
    d.phases.push_back({"growth", 0, 3000000, 10LL << 30, 70LL << 30, -1, -1});
    snap::oom_event o;
    o.trace_index = 4999999;
    o.requested_bytes = 4LL << 30;
    o.live_bytes = 55LL << 30;
    o.inactive_bytes = 5LL << 30;
    o.largest_inactive_block_bytes = 1LL << 30;
    o.fragmentation = true;
    o.site = evil;
    d.ooms.push_back(o);
    d.oom_count = 1;
    d.patterns.push_back({"growing_container", true, false, "high", evil, {evil}});
    a.devices.push_back(d);
    return a;
}

diagnosis_report make_report() {
    diagnosis_report r(&vocabulary::shipped());
    r.headline = "CUDA OOM " + evil;
    r.inputs = {"log " + evil};
    log_analysis l;
    l.source = "pytorch_allocator";
    l.device_kind = "cuda";
    l.message = evil;
    l.file = "train.log";
    l.line = 7;
    l.allocated_bytes = 70LL << 30;
    l.reserved_bytes = 75LL << 30;
    l.capacity_bytes = 80LL << 30;
    l.step = 120;
    l.evidence.push_back({"train.log", 7, evil, "oom"});
    for (int s = 1; s <= 5000; ++s)  // long series: drawn downsampled
        l.memory_series.push_back({s, (40LL << 30) + s * (4LL << 20), "reserved", s, "train.log", std::nullopt});
    l.growth_bytes_per_step = 4.0 * (1 << 20);
    r.log = l;
    estimate_result e;
    e.components = {{"params", "parameters", 16LL << 30, evil}, {"activations", "activations", 50LL << 30, "f"}};
    e.peak_bytes = 66LL << 30;
    e.reserved_peak_bytes = 70LL << 30;
    e.device_peak_bytes = 72LL << 30;
    e.capacity_bytes = 80LL << 30;
    e.budget_bytes = 76LL << 30;
    e.margin_bytes = e.budget_bytes - e.device_peak_bytes;
    e.fits = true;
    r.estimate = e;
    r.snapshots.push_back(make_snapshot());
    r.route.push_back({"step0", "Step 0", evil, ""});
    report_finding f;
    f.severity = "high";
    f.text = evil;
    f.evidence.push_back({"log.oom.source", evil, "train.log:7", evil});
    r.findings.push_back(f);
    report_recommendation rec;
    rec.rank = 1;
    rec.action = "activation_checkpointing";
    rec.rendered = {"--activation_checkpoint.mode " + evil};
    rec.framework = "torchtitan";
    rec.expected_peak_bytes = 40LL << 30;
    rec.expected_device_peak_bytes = 46LL << 30;
    rec.expected_fits = true;
    r.recommendations.push_back(rec);
    report_recommendation rec2 = rec;
    rec2.rank = 2;
    rec2.expected_peak_bytes.reset();
    rec2.expected_device_peak_bytes.reset();
    rec2.expected_note = "no estimate";
    r.recommendations.push_back(rec2);
    r.next_steps = {evil};
    r.uncertain = {evil};
    return r;
}

}  // namespace

TEST_CASE("html_escape: markup, quotes, invalid UTF-8 and controls") {
    CHECK(html_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
    CHECK(html_escape("plain text\n\tok") == "plain text\n\tok");
    CHECK(html_escape("\xE4\xB8\xAD\xE6\x96\x87") == "\xE4\xB8\xAD\xE6\x96\x87");  // valid CJK kept
    CHECK(html_escape("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");                  // 4-byte kept
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(html_escape("a\xFF" "b") == "a" + fffd + "b");
    CHECK(html_escape("\xC0\xAF") == fffd + fffd);              // overlong '/'
    CHECK(html_escape("\xED\xA0\x80") == fffd + fffd + fffd);   // surrogate
    CHECK(html_escape("\xE4\xB8") == fffd + fffd);              // truncated
    CHECK(html_escape(std::string("x\0y", 3)) == "x" + fffd + "y");
    CHECK(html_escape("\x1b[31m") == fffd + "[31m");
    CHECK(html_escape("a\r\nb") == "a\nb");
    CHECK(html_escape("\xC2\x85") == fffd);  // C1 control
}

TEST_CASE("diagnosis html: sections, escaped inputs, charts, self-contained") {
    const std::string h = render_diagnosis_html(make_report());
    for (const char* id : {"summary", "inputs", "oom", "route", "estimate", "snapshots", "findings", "recommendations",
                           "next", "uncertain"})
        CHECK_MESSAGE(h.find(std::string("id=\"") + id + "\"") != std::string::npos, id);
    check_self_contained(h);
    CHECK(h.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
    CHECK(h.find("rank0&lt;b&gt;.pickle") != std::string::npos);
    CHECK(count(h, "<svg class=\"chart\"") >= 6);  // estimate, before/after, timeline, categories, sites, free blocks, series
    check_charts(h);
    CHECK(h.find("95% budget") != std::string::npos);
    CHECK(h.find("downsampled") != std::string::npos);
    CHECK(h.find("min/max per bucket") != std::string::npos);  // the 5000-point series was reduced
    CHECK(h.find("free-block summary") != std::string::npos);
    CHECK(h.find("no figure") != std::string::npos);
    CHECK(h.size() < 2'000'000);
}

TEST_CASE("diagnosis html: minimal report (no log, no estimate, no snapshot)") {
    diagnosis_report r(&vocabulary::shipped());
    r.mode = "preflight";
    r.headline = "nothing";
    const std::string h = render_diagnosis_html(r);
    check_self_contained(h);
    CHECK(h.find("<svg") == std::string::npos);  // no empty charts
    CHECK(h.find("oomdx preflight") != std::string::npos);
    CHECK(h.find("id=\"findings\"") != std::string::npos);
}

TEST_CASE("snapshot html: full, state-only and empty analyses") {
    const std::string full = render_snapshot_html(make_snapshot());
    check_self_contained(full);
    check_charts(full);
    CHECK(full.find("OOM: request 4.00 GiB") != std::string::npos);
    CHECK(full.find("Live memory timeline") != std::string::npos);

    auto s = make_snapshot();
    auto& d = s.devices[0];
    d.has_trace = false;
    d.timeline.clear();
    d.phases.clear();
    d.ooms.clear();
    const std::string state = render_snapshot_html(s);
    check_self_contained(state);
    check_charts(state);
    CHECK(state.find("state only") != std::string::npos);

    snap::snapshot_analysis empty;
    empty.file = evil;
    const std::string e = render_snapshot_html(empty);
    check_self_contained(e);
    CHECK(e.find("<svg") == std::string::npos);
    CHECK(e.find("<script>") == std::string::npos);
}

TEST_CASE("snapshot html: every fixture snapshot renders self-contained with non-empty charts") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots";
    if (!fs::exists(dir)) {
        MESSAGE("skipped: no snapshot fixtures");
        return;
    }
    int n = 0;
    for (const auto& ent : fs::directory_iterator(dir)) {
        const auto ext = ent.path().extension();
        if (ext != ".pickle" && !(ext == ".json" && ent.path().string().find(".expected.") == std::string::npos)) continue;
        snap::snapshot_analysis a;
        try {
            a = snap::analyze_file(ent.path().string());
        } catch (const std::exception& ex) {
            MESSAGE("not analyzable: " << ent.path() << ": " << ex.what());
            continue;
        }
        const std::string h = render_snapshot_html(a);
        INFO(ent.path().string());
        check_charts(h);
        CHECK(h.find("<script") == std::string::npos);
        ++n;
    }
    CHECK(n > 0);
}

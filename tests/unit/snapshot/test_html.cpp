// The snapshot HTML page: the headline of a snapshot with an OOM is the OOM, and every bar's
// legend names the bar and lists exactly its segments (the browser test checks the same on
// the rendered DOM).
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "engine/core/bytes.h"
#include "engine/report/render_html.h"
#include "parsers/snapshot/analysis_batch.h"

using namespace oomdx;
namespace fs = std::filesystem;

namespace {

std::string headline(const std::string& html) {
    const auto b = html.find("id=\"headline\">");
    if (b == std::string::npos) return {};
    const auto s = b + std::string("id=\"headline\">").size();
    return html.substr(s, html.find("</div>", s) - s);
}

using segs = std::vector<std::pair<std::string, std::string>>;

segs segments(const std::string& body, const std::regex& re) {
    segs out;
    for (std::sregex_iterator it(body.begin(), body.end(), re), end; it != end; ++it) out.emplace_back((*it)[1], (*it)[2]);
    return out;
}

// (key, segments) of every tagged bar and every legend, in page order.
void bars_and_legends(const std::string& html, std::vector<std::pair<std::string, segs>>& bars,
                      std::vector<std::pair<std::string, segs>>& legends, std::vector<std::string>& order) {
    static const std::regex bar_re("<g data-bar=\"([^\"]*)\">(.*?)</g>");
    static const std::regex legend_re("<div class=\"legend\" data-for=\"([^\"]*)\">(.*?)</div>");
    static const std::regex rect_seg("<rect [^>]*data-seg=\"([^\"]*)\" data-bytes=\"(-?[0-9]+)\"");
    static const std::regex span_seg("<span data-seg=\"([^\"]*)\" data-bytes=\"(-?[0-9]+)\"");
    std::vector<std::pair<std::size_t, std::string>> pos;
    for (std::sregex_iterator it(html.begin(), html.end(), bar_re), end; it != end; ++it) {
        bars.emplace_back((*it)[1], segments((*it)[2], rect_seg));
        pos.emplace_back(static_cast<std::size_t>(it->position()), "bar:" + (*it)[1].str());
    }
    for (std::sregex_iterator it(html.begin(), html.end(), legend_re), end; it != end; ++it) {
        legends.emplace_back((*it)[1], segments((*it)[2], span_seg));
        pos.emplace_back(static_cast<std::size_t>(it->position()), "legend:" + (*it)[1].str());
    }
    std::sort(pos.begin(), pos.end());
    for (const auto& p : pos) order.push_back(p.second);
}

void check_legends(const std::string& html) {
    std::vector<std::pair<std::string, segs>> bars, legends;
    std::vector<std::string> order;
    bars_and_legends(html, bars, legends, order);
    REQUIRE(bars.size() == legends.size());
    // Same keys in the same order, each legend after its bar, with the same segments.
    for (std::size_t i = 0; i < bars.size(); ++i) {
        INFO(bars[i].first);
        CHECK(bars[i].first == legends[i].first);
        CHECK(bars[i].second == legends[i].second);
        CHECK(!bars[i].second.empty());
    }
    CHECK(html.find("<div class=\"legend\">") == std::string::npos);  // no legend without its bar
}

snap::snapshot_analysis fixture(const char* name) {
    return snap::analyze_file((fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots" / name).string());
}

}  // namespace

TEST_CASE("snapshot html: the headline of a snapshot with an OOM is the OOM") {
    const auto a = fixture("v2_7_oom_expandable.pickle");
    REQUIRE(a.primary >= 0);
    const auto& dev = a.devices[static_cast<std::size_t>(a.primary)];
    REQUIRE(!dev.ooms.empty());
    const auto& o = dev.ooms.back();
    const std::string h = headline(render_snapshot_html(a));
    INFO(h);
    CHECK(h.rfind("Device ", 0) == 0);
    CHECK(h.find("out of memory at trace event " + std::to_string(o.trace_index)) != std::string::npos);
    CHECK(h.find("a request of " + format_bytes(o.requested_bytes) + " failed") != std::string::npos);
    CHECK(h.find(format_bytes(o.live_bytes) + " live of " + format_bytes(o.reserved_bytes) + " reserved") !=
          std::string::npos);
    // The state after the OOM unwound is reported as what it is, after the OOM.
    const auto after = h.find("after the OOM");
    CHECK(after != std::string::npos);
    CHECK(h.find("fragmentation") == std::string::npos);

    // Without an OOM the headline says so and reports the final state.
    const std::string n = headline(render_snapshot_html(fixture("v2_6_annotations.pickle")));
    INFO(n);
    CHECK(n.find("no OOM event") != std::string::npos);
    CHECK(n.find("out of memory") == std::string::npos);
}

TEST_CASE("snapshot html: each legend names its bar and lists exactly the bar's segments") {
    int pages = 0;
    for (const auto& ent : fs::directory_iterator(fs::path(OOMDX_TEST_DIR) / "fixtures" / "snapshots")) {
        if (ent.path().extension() != ".pickle") continue;
        INFO(ent.path().string());
        snap::snapshot_analysis a;
        try {
            a = snap::analyze_file(ent.path().string());
        } catch (const std::exception&) {
            continue;  // hostile fixtures
        }
        check_legends(render_snapshot_html(a));
        ++pages;
    }
    CHECK(pages > 5);
}

TEST_CASE("snapshot html in Chinese: the same bars and legends, the headline and captions in Chinese") {
    for (const char* name : {"v2_7_oom_expandable.pickle", "v2_6_annotations.pickle"}) {
        INFO(name);
        const auto a = fixture(name);
        const std::string zh = render_snapshot_html(a, "zh");
        check_legends(zh);
        CHECK(zh.find("<html lang=\"zh-CN\">") != std::string::npos);
        const std::string h = headline(zh);
        INFO(h);
        CHECK(h.rfind("设备 ", 0) == 0);
        for (const char* en : {"Device ", "live of", "reserved", "after the OOM", "no OOM event", "a request of"})
            CHECK(h.find(en) == std::string::npos);
        for (const char* en : {"Each coloured band", "Two moments on one scale", "The analysis keeps totals", "Table: sites live",
                               "other sites", "at the snapshot", "inactive (cached) blocks", "sites live"})
            CHECK(zh.find(en) == std::string::npos);
        // The English page has the same bars, keyed alike.
        const std::string en = render_snapshot_html(a);
        std::vector<std::pair<std::string, segs>> be, le, bz, lz;
        std::vector<std::string> oe, oz;
        bars_and_legends(en, be, le, oe);
        bars_and_legends(zh, bz, lz, oz);
        CHECK(oe == oz);
    }
}

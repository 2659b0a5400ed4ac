// The timestamp a log line carries in its first 120 bytes, as milliseconds since the epoch
// (UTC, no time zone applied: only differences between lines are used). Forms:
//   2026-01-01 10:00:00,123   2026-01-01T10:00:00.123   [2026-01-01 10:00:00]   (Python logging,
//                                                         torchtitan, DeepSpeed, Megatron, mmcv)
//   2026-01-07-02:38:42       (torch_npu / CANN)
//   [04/27 13:03:34 ...]      (detectron2: month/day, no year: the year 2000 is assumed)
//   I0909 21:01:55.118000     (glog: MMDD, no year)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace oomdx {

namespace log_time_detail {

inline bool digits(std::string_view s, size_t at, size_t n, int& out) {
    if (at + n > s.size()) return false;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian).
inline std::int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    const int era = (y >= 0 ? y : y - 399) / 400;
    const int yoe = y - era * 400;
    const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
}

// HH:MM:SS at s[at..], then an optional [.,]fraction; -1 when not a time.
inline std::int64_t clock_ms(std::string_view s, size_t at) {
    int h = 0, mi = 0, se = 0;
    if (!digits(s, at, 2, h) || at + 8 > s.size() || s[at + 2] != ':' || !digits(s, at + 3, 2, mi) ||
        s[at + 5] != ':' || !digits(s, at + 6, 2, se) || h > 23 || mi > 59 || se > 60)
        return -1;
    std::int64_t ms = ((h * 60 + mi) * 60 + se) * 1000LL;
    size_t f = at + 8;
    if (f < s.size() && (s[f] == '.' || s[f] == ',')) {
        int scale = 100, frac = 0;
        for (size_t i = f + 1; i < s.size() && i < f + 4 && s[i] >= '0' && s[i] <= '9'; ++i, scale /= 10)
            frac += (s[i] - '0') * scale;
        ms += frac;
    }
    return ms;
}

inline std::optional<std::int64_t> at(std::string_view s, int y, int mo, int d, size_t clock) {
    if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
    const std::int64_t c = clock_ms(s, clock);
    if (c < 0) return std::nullopt;
    return days_from_civil(y, mo, d) * 86400000LL + c;
}

}  // namespace log_time_detail

inline std::optional<std::int64_t> log_line_time_ms(std::string_view line) {
    using namespace log_time_detail;
    const std::string_view s = line.substr(0, std::min<size_t>(line.size(), 120));
    for (size_t i = 0; i + 8 <= s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9' || (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')) continue;
        int y = 0, mo = 0, d = 0;
        // YYYY-MM-DD[ T-]HH:MM:SS
        if (digits(s, i, 4, y) && i + 10 < s.size() && s[i + 4] == '-' && digits(s, i + 5, 2, mo) &&
            s[i + 7] == '-' && digits(s, i + 8, 2, d) && (s[i + 10] == ' ' || s[i + 10] == 'T' || s[i + 10] == '-'))
            if (auto t = at(s, y, mo, d, i + 11)) return t;
        // MM/DD HH:MM:SS (detectron2)
        if (digits(s, i, 2, mo) && i + 5 < s.size() && s[i + 2] == '/' && digits(s, i + 3, 2, d) && s[i + 5] == ' ')
            if (auto t = at(s, 2000, mo, d, i + 6)) return t;
        // glog: [IWEF]MMDD HH:MM:SS
        if (i > 0 && (s[i - 1] == 'I' || s[i - 1] == 'W' || s[i - 1] == 'E' || s[i - 1] == 'F') && digits(s, i, 2, mo) &&
            digits(s, i + 2, 2, d) && i + 4 < s.size() && s[i + 4] == ' ')
            if (auto t = at(s, 2000, mo, d, i + 5)) return t;
    }
    return std::nullopt;
}

}  // namespace oomdx

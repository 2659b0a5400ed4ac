#include "parsers/log/memory_fit.h"

#include <algorithm>
#include <cmath>

namespace oomdx {

double line_fit::slope_stderr() const { return sxx > 0 && n > 2 ? sigma / std::sqrt(sxx) : 0; }

line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y, size_t from, size_t to) {
    line_fit f;
    if (to == 0 || to > x.size()) to = x.size();
    if (from >= to) return f;
    f.n = to - from;
    double mx = 0, my = 0;
    for (size_t i = from; i < to; ++i) mx += x[i], my += y[i];
    mx /= static_cast<double>(f.n);
    my /= static_cast<double>(f.n);
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = from; i < to; ++i) {
        const double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
    }
    f.x_mean = mx;
    f.sxx = sxx;
    if (!(sxx > 0)) {
        f.intercept = my;
        return f;
    }
    f.ok = true;
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    double ssr = 0;
    for (size_t i = from; i < to; ++i) {
        const double r = y[i] - f.at(x[i]);
        ssr += r * r;
    }
    f.r2 = syy > 0 ? std::clamp(1.0 - ssr / syy, 0.0, 1.0) : 0.0;
    f.sigma = f.n > 2 ? std::sqrt(ssr / static_cast<double>(f.n - 2)) : 0.0;
    return f;
}

namespace {

// 1.4826 x the median absolute residual: a standard deviation that ignores outliers.
double robust_sigma(const std::vector<double>& x, const std::vector<double>& y, const line_fit& f, size_t from) {
    std::vector<double> r;
    for (size_t i = from; i < x.size(); ++i) r.push_back(std::fabs(y[i] - f.at(x[i])));
    if (r.empty()) return 0;
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
    return 1.4826 * r[r.size() / 2];
}

// After the last point of the first half that lies off the line `f`.
size_t warmup_end(const std::vector<double>& x, const std::vector<double>& y, const line_fit& f, size_t from) {
    double level = 0;
    for (size_t i = from; i < y.size(); ++i) level += std::fabs(y[i]);
    level /= static_cast<double>(std::max<size_t>(1, y.size() - from));
    const double tol = std::max(4 * robust_sigma(x, y, f, from), 0.005 * level);
    size_t end = 0;
    for (size_t i = 0; i < y.size() / 2; ++i)
        if (std::fabs(y[i] - f.at(x[i])) > tol) end = i + 1;
    return end;
}

}  // namespace

series_fit fit_memory_series(const std::vector<double>& x, const std::vector<double>& y) {
    series_fit s;
    s.all = fit_line(x, y);
    for (size_t i = 1; i < y.size(); ++i)
        if (y[i] < y[i - 1]) s.nondecreasing = false;
    s.steady = s.all;
    const size_t n = x.size();
    if (n < 6) return s;
    line_fit tail = fit_line(x, y, n / 2);
    if (!tail.ok) return s;
    size_t from = warmup_end(x, y, tail, n / 2);
    line_fit steady = fit_line(x, y, from);
    if (from > 0 && steady.ok) {  // once more, with the line of the whole steady part
        from = warmup_end(x, y, steady, from);
        steady = fit_line(x, y, from);
    }
    if (!steady.ok) return s;
    s.steady_from = from;
    s.steady = steady;
    return s;
}

}  // namespace oomdx

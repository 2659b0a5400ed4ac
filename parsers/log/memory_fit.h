// Straight-line fits of a per-step memory series: least squares with its fit quality, and
// the split of a warm-up rise from the steady part that follows it.
#pragma once

#include <cstddef>
#include <vector>

namespace oomdx {

struct line_fit {
    size_t n = 0;
    double slope = 0, intercept = 0;  // y = intercept + slope * x
    double r2 = 0;                    // 1 - SSres / SStot (0 when y is constant)
    double sigma = 0;                 // residual standard deviation
    double x_mean = 0, sxx = 0;       // for the slope's standard error: sigma / sqrt(sxx)
    bool ok = false;                  // at least two distinct x
    double at(double x) const { return intercept + slope * x; }
    double slope_stderr() const;
};

// Least squares over points [from, to) (to = 0: the end).
line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y, size_t from = 0, size_t to = 0);

struct series_fit {
    line_fit all;            // every point
    size_t steady_from = 0;  // first point after the warm-up
    line_fit steady;         // points [steady_from, n)
    bool nondecreasing = true;
};

// The warm-up is the points of the first half that lie off the line fitted to the second half
// (by more than four robust standard deviations of its residuals, and more than 0.5% of the
// level): the steady part starts after the last of them. The fit is then redone once.
// Fewer than six points: no warm-up is split off.
series_fit fit_memory_series(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace oomdx

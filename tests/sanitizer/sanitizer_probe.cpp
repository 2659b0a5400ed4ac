// Proof that the sanitizer build catches what it is there to catch, with the place it happened:
// each mode commits one error on purpose, from a value the optimizer cannot see (argv).
//   sanitizer_probe ub N    signed overflow (UBSan, trapping: ASan reports the ILL and its stack)
//   sanitizer_probe heap N  heap read one past the end (ASan)
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const int n = std::atoi(argv[2]);
    if (std::strcmp(argv[1], "ub") == 0) {
        const int sum = INT_MAX - 1 + n;  // overflows for n >= 2
        std::printf("%d\n", sum);
        return 0;
    }
    if (std::strcmp(argv[1], "heap") == 0) {
        std::vector<int> v(static_cast<std::size_t>(n));
        std::printf("%d\n", v.data()[n]);  // one past the end
        return 0;
    }
    return 2;
}

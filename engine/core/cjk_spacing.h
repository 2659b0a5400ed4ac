// Chinese set beside Latin letters or digits takes a space between the two ("因此 HCCL 通信缓冲区",
// "step 3 的内存"), as the translations write their own text. A value spliced into a template
// (a phrase, a fact, a producer's argument) cannot know its neighbours, so the space goes in at
// the seams: the offsets where a value starts and ends in the rendered text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace oomdx {

// At each seam (an offset into `text`, ascending): a space where a CJK ideograph meets an ASCII
// letter or digit, and none between two ideographs (a template's space beside a value it expected
// in Latin: "满足 {size} 的申请" with "未知大小"); any other seam is left as it is.
void space_cjk_seams(std::string& text, const std::vector<std::size_t>& seams);

}  // namespace oomdx

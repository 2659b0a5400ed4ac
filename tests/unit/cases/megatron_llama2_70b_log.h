// rev42's Megatron-LM pretraining log of Llama-2-70B on 8 H100s, as a log pasted from its head: the parallel sizes
// only in arguments.py's "using world size" line (the arguments block without them), an OOM in mlp.py forward.
// Shared by the rev42 and rev43 report tests (docs/cases.md).
#pragma once

namespace oomdx::test {

inline constexpr const char* k_megatron_llama2_70b_log =
    "using world size: 8, data-parallel size: 1, context-parallel size: 1, hierarchical context-parallel sizes: "
    "Nonetensor-model-parallel size: 8, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 1, "
    "encoder-pipeline-model-parallel size: 0\n"
    "------------------------ arguments ------------------------\n"
    "  micro_batch_size ................................ 4\n"
    "  seq_length ...................................... 8192\n"
    "  num_layers ...................................... 80\n"
    "  hidden_size ..................................... 8192\n"
    "  ffn_hidden_size ................................. 28672\n"
    "  num_attention_heads ............................. 64\n"
    "  num_query_groups ................................ 8\n"
    "  sequence_parallel ............................... True\n"
    "  bf16 ............................................ True\n"
    "-------------------- end of arguments ---------------------\n"
    " iteration        1/    1000 | consumed samples:          256 | elapsed time per iteration (ms): 98123.4 | "
    "learning rate: 3.000E-07 | global batch size:   256 | lm loss: 1.187E+01 | loss scale: 1.0 | grad norm: 45.123 |\n"
    "[Rank 0] (after 1 iterations) memory (MB) | allocated: 62011.33 | max allocated: 76210.51 | reserved: 78420.00 | "
    "max reserved: 78420.00\n"
    "  File \"/workspace/Megatron-LM/megatron/core/transformer/mlp.py\", line 102, in forward\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 3 has a total capacity of 79.10 GiB "
    "of which 412.06 MiB is free. Including non-PyTorch memory, this process has 78.69 GiB memory in use. Of the "
    "allocated memory 76.31 GiB is allocated by PyTorch, and 1.82 GiB is reserved by PyTorch but unallocated.\n";

}  // namespace oomdx::test

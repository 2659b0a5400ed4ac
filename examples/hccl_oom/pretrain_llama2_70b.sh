#!/bin/bash
# MindSpeed-LLM launch script, Llama-2-70B on 32 Ascend 910B (4 nodes)
export HCCL_BUFFSIZE=200
NPUS_PER_NODE=8
NNODES=4
TP=8
PP=2
MBS=1
GBS=256
SEQ_LEN=8192

GPT_ARGS="
    --tensor-model-parallel-size ${TP} \
    --pipeline-model-parallel-size ${PP} \
    --sequence-parallel \
    --num-layers 80 \
    --hidden-size 8192 \
    --ffn-hidden-size 28672 \
    --num-attention-heads 64 \
    --group-query-attention \
    --num-query-groups 8 \
    --seq-length ${SEQ_LEN} \
    --max-position-embeddings ${SEQ_LEN} \
    --micro-batch-size ${MBS} \
    --global-batch-size ${GBS} \
    --padded-vocab-size 32000 \
    --swiglu \
    --use-flash-attn \
    --use-distributed-optimizer \
    --recompute-granularity full \
    --recompute-method uniform \
    --recompute-num-layers 1 \
    --bf16
"

torchrun --nproc_per_node $NPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py $GPT_ARGS

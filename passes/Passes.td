//===- Passes.td - einc's passes ---------------------------*- tablegen -*-===//
#ifndef EINC_PASSES_TD
#define EINC_PASSES_TD

include "mlir/Pass/PassBase.td"

def EinMixedPrecision : Pass<"ein-mixed-precision", "mlir::ModuleOp"> {
  let summary = "A precision policy: @forward in bf16/f16 with fp32 where it matters";
  let description = [{
    Rewrites `@forward` (option `funcs`) by a precision policy, before
    autodiff, so that everything downstream sees ordinary IR with casts
    (docs/precision.md). `fp32`: nothing changes. `bf16-mixed` (alias
    `mixed`) and `fp16-mixed`: params stay f32 (the master copy) and every
    float param and input is cast once, at the top, to its bf16 (f16)
    working copy; contractions take narrow operands and give a narrow result
    (f32 accumulation inside); elementwise ops and data movement compute in
    the narrow type; every `sum` reduction takes an f32 input and gives an
    f32 result; the ops reading only such statistics and constants stay f32
    (a variance's `+ eps` and `rsqrt`), and a statistic is rounded to the
    narrow type where it meets narrow values (before a broadcast); the loss
    path (the loss and every op after the last sum or contraction before it)
    stays f32; results other than the loss are cast back to their declared
    types. `bf16`: the same, with the params themselves bf16 (no master
    copy). Each value is cast to a type at most once (constants are
    converted instead), so the result is CSE-clean. A rewritten function
    records `ein.precision = "<policy>"`; one that has it is skipped.

    Example (`policy=bf16-mixed`, `loss = sum(x @ w) / n`):
    ```mlir
    %w16 = ein.cast %w : tensor<4x3xf32> -> tensor<4x3xbf16>
    %y = ein.contract %x16, %w16 ... -> tensor<2x3xbf16>
    %y32 = ein.cast %y : tensor<2x3xbf16> -> tensor<2x3xf32>
    %s = ein.reduce sum %y32 dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"fp32\"",
           "fp32 | bf16-mixed (mixed) | fp16-mixed | bf16">,
    ListOption<"funcs", "funcs", "std::string", "functions to rewrite (default: forward)">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinFoldConstants : Pass<"ein-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluates the tables that depend only on dims at compile time";
  let description = [{
    Finds the values that depend on no argument: `ein.iota`, `ein.constant`
    and the arithmetic, casts, views, broadcasts and contractions over them
    (RoPE's angle, cos and sin tables built from `arange`). Each such value
    that another op reads, when some arithmetic computed it, is replaced by
    one `ein.constant` at the top of the function, computed here (in double,
    rounded to the element type after every op) and shared by every reader
    of an equal table (with the same axes): a constant, not recomputed every
    step, held and counted once. A broadcast of a table stays (its input
    becomes the constant: the backends read broadcasts in place), as do
    bare iotas (computed for free in the kernels that read them). A table
    of more than `max-elements` elements is left to the step, so the
    program file stays small.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", "65536",
           "the largest table folded, in elements">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect"];
}

def EinFreezeParams : Pass<"ein-freeze-params", "mlir::ModuleOp"> {
  let summary = "Marks the params the freeze setting names as never trained";
  let description = [{
    Sets `ein.frozen` on the `ein.kind = "param"` arguments of `@forward`
    whose `ein.name` a `freeze` pattern matches (runtime/base/ParamGroups.h;
    `*`: any run of characters). A frozen param (and a `buffer`, which the
    front end marks so) gets no gradient from ein-autodiff and no optimizer
    state or update from ein-train-step: @train_step returns it as it came.
    A pattern that names no param is an error at `train { freeze = ... }`,
    as is freezing every param (nothing left to train).
  }];
  let options = [
    Option<"forwardName", "forward", "std::string", "\"forward\"",
           "the function whose params are frozen">,
    Option<"freeze", "freeze", "std::string", "\"\"",
           "param name patterns, ',' between">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def EinDecodeStep : Pass<"ein-decode-step", "mlir::ModuleOp"> {
  let summary = "@decode: one position of a causal @forward, keys and values cached";
  let description = [{
    Derives `@decode` from `@forward` for sampling (docs/training.md): its
    arguments are @forward's context inputs at one position (their `ctx`
    axis of size 1), the params, `pos: tensor<1xi32>` (the position), then
    one cache per attention key/value operand (`ein.kind = "cache"`, the
    operand's whole-window shape); its results are the logits at `pos` and
    the caches with row `pos` written. The causal mask tells the key side of
    each attention; a model that cannot be decoded so (no causal mask, a
    reduction or contraction over time that is not attention) is an error
    naming the op.
  }];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinAutodiff : Pass<"ein-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation: @forward -> @grad";
  let description = [{
    Builds `@grad(inputs..., params...) -> (loss, d loss / d param...)` from
    `@forward`, one gradient rule per op through `GradientOpInterface`.
    Gradients of values used more than once are summed; no gradient flows
    into `ein.kind = "input"` arguments, and no op is emitted for a gradient
    nothing needs. The backward reuses forward values (no recompute).
    With `loss-scale`, @grad takes a last argument `%loss_scale:
    tensor<f32> {ein.kind = "loss_scale", ein.name = "loss_scale"}` and
    seeds the backward with it instead of 1: the gradients returned are
    those of `loss * loss_scale` (the loss returned is unscaled).
  }];
  let options = [
    Option<"forwardName", "forward", "std::string", "\"forward\"",
           "the function to differentiate">,
    Option<"gradName", "grad", "std::string", "\"grad\"",
           "the name of the function to create">,
    Option<"lossScale", "loss-scale", "bool", "false",
           "seed the backward with a last argument loss_scale (loss scaling)">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinTrainStep : Pass<"ein-train-step", "mlir::ModuleOp"> {
  let summary = "The whole training step: @grad + clipping + optimizer -> @train_step";
  let description = [{
    Builds `@train_step(inputs..., params..., opt_state..., step, lr) ->
    (loss, grad_norm, params'..., opt_state'...)` from `@grad`: global-norm
    gradient clipping with `torch.nn.utils.clip_grad_norm_` semantics, then the
    optimizer update in PyTorch's order of operations. Also builds
    `@apply_update(params..., grads..., opt_state..., step, lr) -> (grad_norm,
    params'..., opt_state'...)`: the same clipping and update on given
    gradients (the means over micro-batches: `ein-accumulate-grad`).

    Gradients are clipped and the update computed in f32 whatever the
    param's type; a bf16/f16 param has f32 optimizer state and its new value
    is stored with `narrow-update` rounding (stochastic: `ein.stochastic_round`
    seeded by the step count and the param's index).

    With `loss-scaling` (`dynamic` or `static`; @grad from `ein-autodiff
    loss-scale`) both functions carry the loss scaler's state, three
    `tensor<f32>` opt_state arguments and results `loss_scale`,
    `good_steps`, `skipped_steps` after the optimizer's state: @grad is
    seeded with the scale (0 in the state: `loss-scale-init`), the
    gradients are unscaled in f32 before clipping, and when their sum of
    squares is not finite the params and optimizer state are returned
    unchanged, the scale is multiplied by `loss-scale-backoff`, the good
    steps reset and the skipped steps counted; `loss-scale-interval` good
    steps in a row multiply it by `loss-scale-growth` (torch's GradScaler).
  }];
  let options = [
    Option<"gradName", "grad", "std::string", "\"grad\"", "the gradient function">,
    Option<"stepName", "step", "std::string", "\"train_step\"", "the function to create">,
    Option<"applyName", "apply", "std::string", "\"apply_update\"",
           "the function applying given gradients (clipping + optimizer); empty: none">,
    Option<"optimizer", "optimizer", "std::string", "\"adamw\"",
           "adamw | adam | sgd | adagrad">,
    Option<"beta1", "beta1", "double", "0.9", "Adam/AdamW first-moment decay">,
    Option<"beta2", "beta2", "double", "0.999", "Adam/AdamW second-moment decay">,
    Option<"eps", "eps", "double", "-1",
           "Adam/AdamW/Adagrad epsilon (-1: torch's default for the optimizer)">,
    Option<"weightDecay", "weight-decay", "double", "-1",
           "weight decay (-1: torch's default for the optimizer)">,
    Option<"decay", "decay", "std::string", "\"matrices\"",
           "params weight decay applies to: matrices (rank >= 2) | all">,
    Option<"noDecay", "no-decay", "std::string", "\"\"",
           "params weight decay never applies to: name patterns, ',' between "
           "(runtime/base/ParamGroups.h)">,
    Option<"lrScale", "lr-scale", "std::string", "\"\"",
           "learning-rate multipliers: pattern:factor entries, ',' between">,
    Option<"momentum", "momentum", "double", "0", "SGD momentum (torch's default: 0)">,
    Option<"clip", "clip", "double", "1.0", "max global gradient norm (0: no clipping)">,
    Option<"narrowUpdate", "narrow-update", "std::string", "\"stochastic\"",
           "how the f32 update is stored into a bf16/f16 param: stochastic | nearest">,
    Option<"lossScaling", "loss-scaling", "std::string", "\"none\"",
           "none | dynamic | static (the scale stays loss-scale-init)">,
    Option<"lossScaleInit", "loss-scale-init", "double", "65536.0", "the initial loss scale">,
    Option<"lossScaleGrowth", "loss-scale-growth", "double", "2.0",
           "the scale's factor after loss-scale-interval finite steps">,
    Option<"lossScaleBackoff", "loss-scale-backoff", "double", "0.5",
           "the scale's factor after a non-finite step">,
    Option<"lossScaleInterval", "loss-scale-interval", "int64_t", "2000",
           "finite steps in a row before the scale grows">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinShardOptimizer : Pass<"ein-shard-optimizer", "mlir::ModuleOp"> {
  let summary = "ZeRO-1: one rank's share of @apply_update's optimizer state";
  let description = [{
    Rewrites `@apply_update(params..., grads..., opt_state..., [scaler...],
    step, lr) -> (grad_norm, params'..., opt_state'..., [scaler'...])` for
    rank `rank` of `ranks`: the params whose optimizer state this rank does
    not own (runtime/base/ShardPlan.h deals them by size) lose their new value
    and their state — arguments and results — and the ops that computed
    them. Every param and every gradient stays an argument: the global
    gradient norm (clipping) and the loss scaler's finite check still see
    all of them, and the runtime all-gathers the params each owner updated.
    A param's state is the `opt_state` arguments named after it
    (`<param>.<slot>`). With `ranks = 1` nothing changes. The function gets
    `ein.shard = [rank, ranks]`.

    Example (ranks = 2, rank = 1; `a` has 8 elements, `b` 4: `a` is rank
    0's, `b` rank 1's):
    ```mlir
    // before: (%a, %b, %ga, %gb, %a.m, %a.v, %b.m, %b.v, %step, %lr)
    //      -> (norm, a', b', a.m', a.v', b.m', b.v')
    // after:  (%a, %b, %ga, %gb, %b.m, %b.v, %step, %lr)
    //      -> (norm, b', b.m', b.v')
    ```
  }];
  let options = [
    Option<"applyName", "apply", "std::string", "\"apply_update\"", "the function to shard">,
    Option<"ranks", "ranks", "int64_t", "1", "data-parallel ranks">,
    Option<"rank", "rank", "int64_t", "0", "this rank, in [0, ranks)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def EinAccumulateGrad : Pass<"ein-accumulate-grad", "mlir::ModuleOp"> {
  let summary = "Gradient accumulation in compiled code: @grad -> @accumulate_grad";
  let description = [{
    Builds `@accumulate_grad(inputs..., params..., loss_sum, grad_sums...) ->
    (loss_sum', grad_sums'...)` from `@grad(inputs..., params...) -> (loss,
    grads...)`: each result `v` of `@grad` is added, divided by the number of
    micro-batches `k`, to its accumulator (`x' = x + v * (1/k)`). The runtime
    zeroes the accumulators, runs the function once per micro-batch feeding
    each result back into its accumulator, and passes the means of the
    gradients to `@apply_update`. The accumulators are arguments of
    `ein.kind = "accumulator"` named as `@grad`'s results. A loss-scaled
    @grad's `loss_scale` argument becomes the scaler's state (`ein.kind =
    "opt_state"`, `ein.name = "loss_scale"`, read only; the trainer copies
    @apply_update's), the scale in use taken from it as ein-train-step does,
    so the sums are of scaled gradients and @apply_update unscales them.

    Example (k = 2, one param `w : tensor<4xf32>`):
    ```mlir
    func.func @accumulate_grad(%x: tensor<4xf32>, %w: tensor<4xf32>,
        %loss_sum: tensor<f32> {ein.kind = "accumulator", ein.name = "loss"},
        %w_sum: tensor<4xf32> {ein.kind = "accumulator", ein.name = "w"})
        -> (tensor<f32>, tensor<4xf32>) {
      ... @grad's body: %loss, %dw ...
      %h = ein.constant dense<5.000000e-01> : tensor<f32>
      %dw_mean = ein.mul %dw, (broadcast of %h) : tensor<4xf32>
      %w_sum2 = ein.add %w_sum, %dw_mean : tensor<4xf32>
      ...
    }
    ```
  }];
  let options = [
    Option<"gradName", "grad", "std::string", "\"grad\"", "the gradient function">,
    Option<"accumulateName", "accumulate", "std::string", "\"accumulate_grad\"",
           "the function to create">,
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "micro-batches per optimizer step (k: each gradient is added divided by k)">,
    Option<"lossScaleInit", "loss-scale-init", "double", "65536.0",
           "@grad's loss_scale argument becomes the scaler's state `loss_scale` "
           "(opt_state), this while it is 0">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinRemat : Pass<"ein-remat", "mlir::ModuleOp"> {
  let summary = "Rematerialization: which forward values the backward keeps, which it recomputes";
  let description = [{
    On `@grad`, `@train_step` and `@accumulate_grad` (option `funcs`):
    every forward value a later phase reads is either kept (live from the
    forward to its last use) or recomputed, by a clone of its op tagged
    `ein.phase = "recompute"` placed just before its first use in the
    backward (or by another clone); the backward then reads the clone.
    Policies: `none`; `full` checkpoints each loop iteration (`for`; ops
    tagged `ein.layer`): it keeps the values that cross an iteration's
    boundary and what is outside loops, and recomputes the rest; `every`
    (option `every = K`) checkpoints regions of K iterations, `sqrt` regions
    of ceil(sqrt(L)) of L iterations; `selective` keeps contraction outputs
    and what crosses an iteration's boundary, and recomputes elementwise
    ops, reductions and data movement; `names` keeps exactly the
    values bound to the `let` names listed in `names` (`ein.let`); `budget`
    (option `budget`, bytes) takes the plan of least predicted recompute
    time on the device (options `device`, or `matrix-flops`,
    `vector-flops`, `bandwidth`) whose planned peak fits (RematSolver.h),
    and fails naming the least peak when none does. Each
    function rewritten records `ein.remat = {policy, recomputed_ops,
    recompute_flops, kept, kept_bytes, predicted_peak}` (budget: also
    `budget`, `plan`, `frontier` points, `candidates` priced). Run after
    ein-fuse-elementwise, it keeps fused kernels whole (a clone goes before
    the first op of its reader's kernel; clones of one group placed together
    get a group of their own). docs/remat.md.

    Example (`policy=full` on an iteration `h = tanh(x @ w)` whose backward
    reads `x @ w`): the backward's first reader of it is preceded by
    ```mlir
    %z2 = ein.contract %x, %w ... {ein.phase = "recompute", ein.layer = "layer.0"}
    ```
    and reads `%z2`; the forward's `%z` dies in the forward.
  }];
  let options = [
    ListOption<"funcs", "funcs", "std::string",
               "functions to rewrite (default: grad, train_step, accumulate_grad)">,
    Option<"policy", "policy", "std::string", "\"none\"",
           "none | full | every | sqrt | selective | names | budget">,
    Option<"every", "every", "int64_t", "0", "every: keep the inputs of every K-th iteration">,
    ListOption<"namesToKeep", "names", "std::string", "names: the let-bound values to keep">,
    Option<"budget", "budget", "double", "0",
           "budget: the most bytes the step's planned peak may take">,
    Option<"device", "device", "std::string", "\"h100\"",
           "the built-in device profile recompute time is predicted on">,
    Option<"matrixFlops", "matrix-flops", "double", "0",
           "FLOP/s of contractions (0: the device's f32 figure)">,
    Option<"vectorFlops", "vector-flops", "double", "0",
           "FLOP/s of other ops (0: the device's f32 figure)">,
    Option<"bandwidth", "bandwidth", "double", "0", "bytes/s of memory (0: the device's)">,
    Option<"bf16MatrixFlops", "bf16-matrix-flops", "double", "0",
           "FLOP/s of bf16 contractions (0: matrix-flops)">,
    Option<"bf16VectorFlops", "bf16-vector-flops", "double", "0",
           "FLOP/s of other bf16 ops (0: vector-flops)">,
    Option<"f16MatrixFlops", "f16-matrix-flops", "double", "0",
           "FLOP/s of f16 contractions (0: matrix-flops)">,
    Option<"f16VectorFlops", "f16-vector-flops", "double", "0",
           "FLOP/s of other f16 ops (0: vector-flops)">,
    Option<"kernelLatency", "kernel-latency", "double", "-1",
           "seconds per kernel launch a clone kernel pays (negative: the device's)">,
    ListOption<"mustFit", "must-fit", "std::string",
               "budget: the functions a plan must fit (default: all); the others take "
               "the plan of least peak when none fits">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinRecomputeInKernels : Pass<"ein-recompute-in-kernels", "mlir::func::FuncOp"> {
  let summary = "The default plan: the backward recomputes, inside its own kernels, "
                "the elementwise values it can rebuild from what it keeps anyway";
  let description = [{
    A forward value the backward reads is kept from the forward to the
    backward (a saved activation). When that value is elementwise (a
    GELU's tanh, a LayerNorm's normalised input, a causal mask, a cast)
    and every backward op reading it is elementwise of its shape, the pass
    has the backward compute it again instead: the value's op, and the
    elementwise ops and broadcasts between it and values that stay saved
    (or constants, iotas, arguments), are cloned just before the first
    backward reader, tagged `ein.phase = "backward"`, and the backward
    reads the clones. Fusion, which runs later, puts the clones in the
    reader's kernel: they are computed in registers, and the forward no
    longer writes what they replace. Nothing new is saved: a clone reads
    only values saved anyway, constants, iotas and arguments. Random ops
    (stochastic_round) are never cloned. The clones compute what the
    originals computed, so the gradients keep their bits. docs/remat.md,
    "The default plan".
  }];
  let dependentDialects = ["mlir::ein::EinDialect"];
}

def EinPrintCosts : Pass<"ein-print-costs", "mlir::ModuleOp"> {
  let summary = "Test pass: print the FLOP, byte and memory ledgers of a function";
  let description = [{
    Runs analyzeCosts and analyzeMemory (passes/Analysis.h) over one
    function and prints, to stdout, one line per op (with `ops=true`) and
    the totals: FLOPs per phase, model FLOPs, params, param/grad/optimizer/
    input/activation bytes and the peak of live bytes. The definitions are in
    docs/analyses.md. Fails when the function does not exist.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"train_step\"",
           "the function to analyze">,
    Option<"printOps", "ops", "bool", "false", "print one line per op">,
    Option<"fused", "fused", "bool", "false",
           "price the function's ein.fusion groups as kernels (applyFusionToCosts, "
           "fusedValues; run ein-fuse-elementwise first)">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect", "mlir::func::FuncDialect"];
}

def EinFuseEpilogues : Pass<"ein-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "Make the fusion group reading a contraction its epilogue";
  let description = [{
    Runs after `ein-fuse-elementwise`. A contraction whose product is read
    by a fusion group (or a lone elementwise op) of the product's shape and
    `ein.phase` gets that group as its epilogue: the backend computes the
    group on each block of the product's rows right after the block's
    product, while it is in cache (the CPU backend), or as the matrix
    library's fused epilogue (bias, ReLU, GELU, residual, scale on
    cuBLASLt) where the group is exactly one. The first such reader in
    program order names the group; it qualifies when every other reader of
    the product comes after the group (those read the product's buffer, the
    epilogue's aux output) and each row of the product is whole iterations
    of the group's kernel (its trailing-dim reads divide the row).

    The contraction gets `ein.epilogue = N : i64`, N the group's
    `ein.fusion` number (a lone op gets a new number), and moves to just
    before the group's first member. Values are not changed.

    ```mlir
    %h = ein.contract %x, %w ... {ein.epilogue = 0 : i64} : ... -> tensor<256x512xf32>
    %b = ein.add %h, %bias {ein.fusion = 0 : i64} : tensor<256x512xf32>
    %r = ein.max %b, %zero {ein.fusion = 0 : i64} : tensor<256x512xf32>
    ```
  }];
  let dependentDialects = ["mlir::ein::EinDialect"];
}

def EinFuseRows : Pass<"ein-fuse-rows", "mlir::func::FuncOp"> {
  let summary = "Fuse reductions over rows with their producers and consumers";
  let description = [{
    Runs after `ein-fuse-elementwise` and `ein-fuse-epilogues`. A *row
    group* is a reduction over the trailing dims of a `[rows, L]` tensor
    (sum of f32 or i32, max, min) together with the ops over the same rows
    that produce its input, that read its result (per-row ops of the
    `[rows]` shape, and through a broadcast back into `[rows, L]`), and that
    read the same rows (siblings); a backend runs it as one kernel per row:
    each reduction one pass over the row while it is in cache, the per-row
    values in registers, the input read from memory once. Softmax (max,
    subtract, exp, sum, divide), layernorm and rmsnorm, cross-entropy's
    log-sum-exp and their gradients each become one row kernel.

    From each such reduction in program order a group grows over adjacent
    units (elementwise fusion groups and single ops) of the group's shape
    and `ein.phase`, unless the unit is a contraction's epilogue, the group
    would read more than `max-inputs` buffers, or a path would leave the
    group and come back (a cycle once it runs as one kernel). A broadcast
    joins only to spread a value the group computes; other broadcasts (a
    gain, a bias, a scalar, a per-row input) are read in place.

    Each member of a row group gets `ein.rows = N : i64` (and loses
    `ein.fusion`), and the function is reordered so that each group's
    members are adjacent. Values are not changed.

    ```mlir
    %m = ein.reduce max %x dims [1] {ein.rows = 0 : i64} : tensor<8x256xf32> -> tensor<8xf32>
    %b = ein.broadcast %m dims [0] {ein.rows = 0 : i64} : tensor<8xf32> -> tensor<8x256xf32>
    %d = ein.sub %x, %b {ein.rows = 0 : i64} : tensor<8x256xf32>
    %e = ein.exp %d {ein.rows = 0 : i64} : tensor<8x256xf32>
    %s = ein.reduce sum %e dims [1] {ein.rows = 0 : i64} : tensor<8x256xf32> -> tensor<8xf32>
    %t = ein.broadcast %s dims [0] {ein.rows = 0 : i64} : tensor<8xf32> -> tensor<8x256xf32>
    %p = ein.div %e, %t {ein.rows = 0 : i64} : tensor<8x256xf32>
    ```
  }];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned", "16",
           "most distinct buffers a row kernel reads">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect"];
}

def EinFuseElementwise : Pass<"ein-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Group chains of elementwise ops into fused kernels";
  let description = [{
    Partitions a function's elementwise ops (unary, binary, `cmp`, `select`,
    `cast`) into fusion groups: connected ops of one result shape that a
    backend runs as one kernel, reading each group input once and writing
    only the values used outside the group. A broadcast operand whose input
    is a scalar, the result's leading dims or its trailing dims (a
    layernorm statistic, a bias) is read in place; within a group every
    leading-dim read shares one block size, and so does every trailing-dim
    read. In program order, an op joins the group producing one of its
    operands or, failing that, a group already reading one of its operands
    (siblings share the read), unless a value it reads from outside depends
    on the group (that would make a cycle), the group would read more than
    `max-inputs` buffers, or the group holds ops of another `ein.phase`
    (pulling backward work into a forward kernel would keep its result alive
    from the forward to the backward).

    Each member of a group of two or more ops gets `ein.fusion = N : i64`
    (N numbers the groups of the function from 0), and the ops are
    reordered (a topological order, otherwise the original one) so that
    each group's members are adjacent. Values are not changed: the pass only
    annotates and reorders, so every analysis still sees the primitive ops.
  }];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned", "16",
           "most distinct buffers a fused kernel reads">,
  ];
  let dependentDialects = ["mlir::ein::EinDialect"];
}

#endif // EINC_PASSES_TD

//===- OneDnnMatmul.cpp - oneDNN's matmul primitive through dlopen ---------===//
#include "runtime/cpu/OneDnnMatmul.h"

// Types and constants only: every function is looked up with dlsym.
#include <oneapi/dnnl/dnnl.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace einrt {

namespace {

/// Every oneDNN function einc calls, for X(name) expansions below.
#define EINC_DNNL_FUNCTIONS(X)                                                                     \
  X(dnnl_version)                                                                                  \
  X(dnnl_engine_create)                                                                            \
  X(dnnl_stream_create)                                                                            \
  X(dnnl_stream_destroy)                                                                           \
  X(dnnl_memory_desc_init_by_strides)                                                              \
  X(dnnl_matmul_desc_init)                                                                         \
  X(dnnl_primitive_attr_create)                                                                    \
  X(dnnl_primitive_attr_destroy)                                                                   \
  X(dnnl_primitive_attr_set_scratchpad_mode)                                                       \
  X(dnnl_primitive_attr_set_post_ops)                                                              \
  X(dnnl_post_ops_create)                                                                          \
  X(dnnl_post_ops_destroy)                                                                         \
  X(dnnl_post_ops_append_sum)                                                                      \
  X(dnnl_primitive_desc_create)                                                                    \
  X(dnnl_primitive_desc_destroy)                                                                   \
  X(dnnl_primitive_desc_query)                                                                     \
  X(dnnl_primitive_desc_query_md)                                                                  \
  X(dnnl_memory_desc_get_size)                                                                     \
  X(dnnl_primitive_create)                                                                         \
  X(dnnl_memory_create)                                                                            \
  X(dnnl_memory_destroy)                                                                           \
  X(dnnl_memory_set_data_handle)                                                                   \
  X(dnnl_primitive_execute)

/// The functions einc calls, each as dnnl.h declares it.
struct Api {
#define EINC_DNNL_MEMBER(name) decltype(&::name) name = nullptr;
  EINC_DNNL_FUNCTIONS(EINC_DNNL_MEMBER)
#undef EINC_DNNL_MEMBER
  void (*ompSetNumThreads)(int) = nullptr; // null: a sequential oneDNN
  dnnl_engine_t engine = nullptr;
  std::string version;
};

struct Loaded {
  void *handle = nullptr;
  Api api;
  std::string error;
};

Loaded &load() {
  static Loaded loaded = [] {
    Loaded l;
    const char *named = std::getenv("EINC_ONEDNN_LIBRARY");
    const std::string file = named && *named ? named : "libdnnl.so.2";
    void *lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      l.error = e ? e : file + " not found";
      return l;
    }
    Api &api = l.api;
    bool ok = true;
    auto symbol = [&](const char *name, auto &out) {
      out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(dlsym(lib, name));
      if (!out && ok) {
        l.error = file + " has no " + name;
        ok = false;
      }
    };
#define EINC_DNNL_SYMBOL(name) symbol(#name, api.name);
    EINC_DNNL_FUNCTIONS(EINC_DNNL_SYMBOL)
#undef EINC_DNNL_SYMBOL
    if (!ok)
      return l;
    const dnnl_version_t *v = api.dnnl_version();
    if (!v) {
      l.error = file + " reports no version";
      return l;
    }
    api.version =
        std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    if (v->cpu_runtime == DNNL_RUNTIME_OMP) {
      // The OpenMP runtime oneDNN was built against (libgomp on Debian).
      api.ompSetNumThreads = reinterpret_cast<void (*)(int)>(dlsym(lib, "omp_set_num_threads"));
      if (!api.ompSetNumThreads)
        api.ompSetNumThreads =
            reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
      if (!api.ompSetNumThreads) {
        l.error = file + " runs on OpenMP, but omp_set_num_threads is not found";
        return l;
      }
    } else if (v->cpu_runtime != DNNL_RUNTIME_SEQ) {
      l.error = file + " (oneDNN " + api.version +
                ") runs on TBB or a threadpool, which einc cannot hold to one thread per call";
      return l;
    }
    if (api.dnnl_engine_create(&api.engine, dnnl_cpu, 0) != dnnl_success) {
      l.error = file + ": no CPU engine";
      return l;
    }
    l.handle = lib;
    return l;
  }();
  return loaded;
}

/// Holds oneDNN's OpenMP to one thread on the calling thread (each thread
/// has its own OpenMP thread count).
void oneThread(const Api &api) {
  thread_local bool single = false;
  if (!single && api.ompSetNumThreads) {
    api.ompSetNumThreads(1);
    single = true;
  }
}

dnnl_data_type_t dnnlType(MatmulType t) {
  return t == MatmulType::F32 ? dnnl_f32 : t == MatmulType::BF16 ? dnnl_bf16 : dnnl_f16;
}
const char *typeName(MatmulType t) {
  return t == MatmulType::F32 ? "f32" : t == MatmulType::BF16 ? "bf16" : "f16";
}
int64_t typeBytes(MatmulType t) { return t == MatmulType::F32 ? 4 : 2; }

std::string describe(const MatmulShape &s) {
  return std::string(typeName(s.ab)) + " x " + typeName(s.ab) + " -> " + typeName(s.c) + " " +
         (s.transA ? "T" : "N") + (s.transB ? "T" : "N") + " " + std::to_string(s.m) + "x" +
         std::to_string(s.n) + "x" + std::to_string(s.k) + " lda=" + std::to_string(s.lda) +
         " ldb=" + std::to_string(s.ldb) + " ldc=" + std::to_string(s.ldc) +
         (s.accumulate ? " accumulate" : "");
}

std::string statusText(dnnl_status_t s) {
  switch (s) {
  case dnnl_unimplemented:
    return "oneDNN implements no matmul for it on this CPU";
  case dnnl_invalid_arguments:
    return "oneDNN calls its arguments invalid";
  case dnnl_out_of_memory:
    return "oneDNN is out of memory";
  default:
    return "oneDNN status " + std::to_string(int(s));
  }
}

using Key = std::tuple<int64_t, int64_t, int64_t, bool, bool, int64_t, int64_t, int64_t, MatmulType,
                       MatmulType, bool>;
Key keyOf(const MatmulShape &s) {
  return Key(s.m, s.n, s.k, s.transA, s.transB, s.lda, s.ldb, s.ldc, s.ab, s.c, s.accumulate);
}

} // namespace

struct OneDnnMatmul::Handles {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t a{}, b{}, c{}, scratch{};
  size_t scratchBytes = 0;
};

namespace {

/// What each thread keeps: its stream, its scratchpad and, per primitive
/// it ran, memory objects whose data handles each call points at its
/// operands (primitives live as long as the process, so their addresses
/// are stable keys).
struct ThreadState {
  struct Memories {
    dnnl_memory_t a = nullptr, b = nullptr, c = nullptr, scratch = nullptr;
  };
  const Api *api = nullptr;
  dnnl_stream_t stream = nullptr;
  std::vector<unsigned char> scratch;
  std::unordered_map<const OneDnnMatmul::Handles *, Memories> memories;

  ~ThreadState() {
    if (!api)
      return;
    for (auto &[h, m] : memories)
      for (dnnl_memory_t x : {m.a, m.b, m.c, m.scratch})
        if (x)
          api->dnnl_memory_destroy(x);
    if (stream)
      api->dnnl_stream_destroy(stream);
  }
};

/// What oneDNN said of creating `what` (a failure names it).
Status created(dnnl_status_t s, const char *what) {
  if (s == dnnl_success)
    return Status::success();
  return Status(StatusCode::Unavailable,
                (*what ? std::string(what) + ": " : std::string()) + statusText(s));
}

} // namespace

Expected<void *> oneDnnLibrary() {
  Loaded &l = load();
  if (!l.handle)
    return Status(StatusCode::Unavailable, l.error);
  return l.handle;
}

std::string oneDnnVersion() {
  Loaded &l = load();
  return l.handle ? l.api.version : "";
}

Expected<const OneDnnMatmul *> OneDnnMatmul::get(const MatmulShape &s) {
  Loaded &l = load();
  if (!l.handle)
    return Status(StatusCode::Unavailable, "oneDNN is not available (" + l.error + ")");
  struct Entry {
    std::unique_ptr<OneDnnMatmul> matmul;
    std::unique_ptr<Handles> handles;
    Status error;
  };
  static std::mutex mutex;
  static std::map<Key, Entry> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = cache.try_emplace(keyOf(s));
  Entry &e = it->second;
  if (fresh) {
    auto fail = [&](Status why) { e.error = std::move(why).withContext(describe(s) + ": "); };
    if (s.m <= 0 || s.n <= 0 || s.k < 0) {
      fail(Status::invalid("a oneDNN matmul needs m and n > 0"));
    } else if (s.ab == MatmulType::F32 && s.c != MatmulType::F32) {
      fail(Status::invalid("f32 operands make an f32 result"));
    } else if (s.k == 0) {
      e.matmul = std::make_unique<OneDnnMatmul>(s, "empty sum", nullptr);
    } else {
      const Api &api = l.api;
      oneThread(api); // the primitive plans its blocking for this thread count
      auto h = std::make_unique<Handles>();
      const dnnl_dims_t aDims = {s.m, s.k}, bDims = {s.k, s.n}, cDims = {s.m, s.n};
      const dnnl_dims_t aStrides = {s.transA ? 1 : s.lda, s.transA ? s.lda : 1};
      const dnnl_dims_t bStrides = {s.transB ? 1 : s.ldb, s.transB ? s.ldb : 1};
      const dnnl_dims_t cStrides = {s.ldc, 1};
      dnnl_matmul_desc_t desc;
      dnnl_primitive_attr_t attr = nullptr;
      dnnl_post_ops_t post = nullptr;
      dnnl_primitive_desc_t pd = nullptr;
      Status why;
      // The first failure stays in `why`; the && chain calls nothing after it.
      auto step = [&](dnnl_status_t r, const char *what) {
        why = created(r, what);
        return why.ok();
      };
      bool ok =
          step(api.dnnl_memory_desc_init_by_strides(&h->a, 2, aDims, dnnlType(s.ab), aStrides),
               "A") &&
          step(api.dnnl_memory_desc_init_by_strides(&h->b, 2, bDims, dnnlType(s.ab), bStrides),
               "B") &&
          step(api.dnnl_memory_desc_init_by_strides(&h->c, 2, cDims, dnnlType(s.c), cStrides),
               "C") &&
          step(api.dnnl_matmul_desc_init(&desc, &h->a, &h->b, nullptr, &h->c), "matmul") &&
          step(api.dnnl_primitive_attr_create(&attr), "attributes") &&
          step(api.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
               "scratchpad");
      if (ok && s.accumulate)
        ok = step(api.dnnl_post_ops_create(&post), "post-ops") &&
             step(api.dnnl_post_ops_append_sum(post, 1.0f), "sum post-op") &&
             step(api.dnnl_primitive_attr_set_post_ops(attr, post), "post-ops");
      ok = ok && step(api.dnnl_primitive_desc_create(&pd, &desc, attr, l.api.engine, nullptr), "");
      const char *impl = nullptr;
      if (ok &&
          api.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success)
        impl = nullptr;
      if (ok) {
        if (const dnnl_memory_desc_t *md =
                api.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)) {
          h->scratch = *md;
          h->scratchBytes = api.dnnl_memory_desc_get_size(md);
        }
        ok = step(api.dnnl_primitive_create(&h->primitive, pd), "matmul");
      }
      if (pd)
        api.dnnl_primitive_desc_destroy(pd);
      if (post)
        api.dnnl_post_ops_destroy(post);
      if (attr)
        api.dnnl_primitive_attr_destroy(attr);
      if (ok) {
        e.matmul = std::make_unique<OneDnnMatmul>(s, impl ? impl : "?", h.get());
        e.handles = std::move(h);
      } else {
        fail(why);
      }
    }
  }
  if (!e.matmul)
    return e.error;
  return static_cast<const OneDnnMatmul *>(e.matmul.get());
}

Status OneDnnMatmul::run(const void *a, const void *b, void *c) const {
  const MatmulShape &s = shape_;
  if (!handles_) { // k == 0: the empty sum, zero (C += 0 leaves C)
    if (!s.accumulate)
      for (int64_t r = 0; r < s.m; ++r)
        std::memset(static_cast<unsigned char *>(c) + r * s.ldc * typeBytes(s.c), 0,
                    size_t(s.n * typeBytes(s.c)));
    return Status::success();
  }
  const Api &api = load().api;
  oneThread(api);
  thread_local ThreadState state;
  if (!state.api) {
    state.api = &api;
    EINRT_TRY(created(api.dnnl_stream_create(&state.stream, api.engine, dnnl_stream_default_flags),
                      "oneDNN stream"));
  }
  const Handles &h = *handles_;
  ThreadState::Memories &m = state.memories[handles_];
  if (!m.a) {
    // Placeholders: each call points them at its operands.
    void *none = DNNL_MEMORY_NONE;
    EINRT_TRY(created(api.dnnl_memory_create(&m.a, &h.a, api.engine, none), "oneDNN memory"));
    EINRT_TRY(created(api.dnnl_memory_create(&m.b, &h.b, api.engine, none), "oneDNN memory"));
    EINRT_TRY(created(api.dnnl_memory_create(&m.c, &h.c, api.engine, none), "oneDNN memory"));
    if (h.scratchBytes)
      EINRT_TRY(created(api.dnnl_memory_create(&m.scratch, &h.scratch, api.engine, none),
                        "oneDNN memory"));
  }
  if (state.scratch.size() < h.scratchBytes)
    state.scratch.resize(h.scratchBytes);
  api.dnnl_memory_set_data_handle(m.a, const_cast<void *>(a));
  api.dnnl_memory_set_data_handle(m.b, const_cast<void *>(b));
  api.dnnl_memory_set_data_handle(m.c, c);
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, m.a}, {DNNL_ARG_WEIGHTS, m.b}, {DNNL_ARG_DST, m.c}};
  int count = 3;
  if (m.scratch) {
    api.dnnl_memory_set_data_handle(m.scratch, state.scratch.data());
    args[count++] = {DNNL_ARG_SCRATCHPAD, m.scratch};
  }
  // A CPU stream on OpenMP or sequential runs the primitive before it returns.
  return created(api.dnnl_primitive_execute(h.primitive, state.stream, count, args),
                 describe(s).c_str());
}

std::string brgemmIsa(const std::string &implementation) {
  const std::string prefix = "brg:";
  return implementation.rfind(prefix, 0) == 0 ? implementation.substr(prefix.size()) : "";
}

Expected<std::string> oneDnnBf16Isa() {
  MatmulShape probe;
  probe.m = probe.n = probe.k = probe.lda = probe.ldb = probe.ldc = 256;
  probe.ab = MatmulType::BF16;
  Expected<const OneDnnMatmul *> mm = OneDnnMatmul::get(probe);
  if (!mm.ok())
    return mm.takeStatus();
  const std::string isa = brgemmIsa((*mm)->implementation());
  if (isa.find("bf16") == std::string::npos)
    return Status(StatusCode::Unavailable,
                  "oneDNN " + oneDnnVersion() + " runs bf16 matmuls here on " +
                      (*mm)->implementation() +
                      ", not a brgemm kernel of a bf16 ISA (AVX512-BF16 or AMX)");
  return isa;
}

} // namespace einrt

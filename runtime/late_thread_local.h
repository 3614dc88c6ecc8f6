// Per-thread state of the MPI wrappers that outlives the thread's C++
// thread_local destructors.
//
// Hazard: a program may call MPI from a thread_local object's destructor
// (a per-thread communicator or window freed at thread exit, a last
// flush). C++ destroys a thread's thread_local objects in the reverse order
// of their construction, so state the wrappers created at the thread's
// first MPI call would already be gone for an object made before that
// call: a use after free, which crashed such programs. Here the object is
// reached through a plain pointer (no destructor, no guard on access) and
// deleted by a pthread key destructor, which glibc runs after every C++
// thread_local destructor of the thread. A call made after that (from
// another library's key destructor) creates a new one; glibc runs the key
// destructors again for keys set while they ran, so that one is freed too.
#pragma once

#include <pthread.h>

namespace scalana::rt {

template <typename T> class LateThreadLocal {
public:
  // This thread's object, created on first use. Not async-signal-safe.
  static T &Get() {
    if (T *p = ptr_)
      return *p;
    return Create();
  }
  // This thread's object if it exists (null before the first Get and after
  // the thread's end has deleted it).
  static T *Peek() { return ptr_; }

private:
  static __attribute__((noinline)) T &Create() {
    static pthread_key_t key = MakeKey();
    T *p = new T;
    ptr_ = p;
    pthread_setspecific(key, p);
    return *p;
  }
  static pthread_key_t MakeKey() {
    pthread_key_t key;
    pthread_key_create(&key, [](void *p) {
      ptr_ = nullptr;
      delete static_cast<T *>(p);
    });
    return key;
  }
  // Initial-exec: the runtime is always preloaded, so static TLS exists.
  static __thread T *ptr_ __attribute__((tls_model("initial-exec")));
};

template <typename T> __thread T *LateThreadLocal<T>::ptr_ = nullptr;

} // namespace scalana::rt

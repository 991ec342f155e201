#if canImport(Glibc)
  import Glibc
#endif

/// Runs work that recurses once per level of its input — swift-syntax's parser, and every walk of
/// the tree it builds — on a thread of its own with a stack far larger than a process's 8 MB:
/// address space only, touched as deep as the work goes. With the size of a source file bounded
/// (`SourceDeclarations.maximumFileBytes`), the deepest chain a file can hold fits in it (a
/// 512 KiB file of `a!!!…` takes about 600 MB of stack in a debug build), where the main thread's
/// stack overflowed at a few thousand levels.
enum DeepStack {
  /// The stack of the thread.
  static let bytes = 2 << 30

  /// `body`'s result, computed on the thread (on the calling thread when no such thread can be
  /// made: the address space is limited).
  static func run<T>(_ body: () -> T) -> T {
    withoutActuallyEscaping(body) { body in
      let result = Box<T>()
      let job = Job { result.value = body() }
      var attributes = pthread_attr_t()
      pthread_attr_init(&attributes)
      defer { pthread_attr_destroy(&attributes) }
      let context = Unmanaged.passRetained(job).toOpaque()
      var thread = pthread_t()
      let started =
        pthread_attr_setstacksize(&attributes, bytes) == 0
        && pthread_create(
          &thread, &attributes,
          { context in
            if let context { Unmanaged<Job>.fromOpaque(context).takeRetainedValue().work() }
            return nil
          }, context) == 0
      if started {
        pthread_join(thread, nil)
      } else {
        Unmanaged<Job>.fromOpaque(context).release()
        job.work()
      }
      return result.value ?? body()
    }
  }

  private final class Job {
    let work: () -> Void
    init(_ work: @escaping () -> Void) { self.work = work }
  }

  private final class Box<T> {
    var value: T?
  }
}

import UnleashedKit

/// The one thread that makes every libgphoto2 call.
///
/// libgphoto2 is not thread-safe (its port and abilities lists, its loaded drivers and each
/// camera handle are shared state) and its calls block, so they all run here, one at a time:
/// every ``GPhoto2Camera`` uses it as its actor executor, and code outside the actors hands
/// work over with `perform(_:)` and `submit(_:)`. Blocking this thread blocks no Swift
/// concurrency pool thread.
enum OwnerThread {
    static let shared = ExecutorThread(name: "libgphoto2")
}

#if WEBIMAGE_TSAN
import WebImageCore

/// In the ThreadSanitizer build (`-DWEBIMAGE_TSAN`, scripts/sanitize.sh thread), `Mutex` in this
/// module is WebImageCore's pthread-backed `PThreadMutex`, whose locking TSan sees; this
/// declaration of the module's own shadows the imported `Synchronization.Mutex`. Without the
/// flag this file is empty and `Mutex` is Synchronization's.
typealias Mutex<Value: ~Copyable> = PThreadMutex<Value>
#endif

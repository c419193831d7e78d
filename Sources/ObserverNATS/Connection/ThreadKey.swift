import Foundation

/// A new key for a value of each thread's own (`pthread_getspecific`), kept for the process's
/// lifetime: the bridge marks cnats' callback and delivery threads with it.
func makeThreadKey() -> pthread_key_t {
    var key = pthread_key_t()
    let result = pthread_key_create(&key, nil)
    precondition(result == 0, "pthread_key_create failed: \(result)")
    return key
}

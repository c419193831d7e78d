// The engine's public types are ObserverSwift's API: a user imports
// ObserverSwift and spells them `ObserverSwift.Subscription`. Each is
// re-exported by name, so nothing else of the engine reaches a user's
// scope; the kinds' files import the engine's `package` API themselves.

@_exported import struct ObserverEngine.Delivery
@_exported import struct ObserverEngine.LiveSubscription
@_exported import struct ObserverEngine.ObserverBufferingPolicy
@_spi(EngineDiagnostics) @_exported import enum ObserverEngine.ObserverCore
@_exported import enum ObserverEngine.ObserverError
@_exported import class ObserverEngine.Subscription
@_exported import class ObserverEngine.SubscriptionBag

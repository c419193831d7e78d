// The types the engine declares are ObserverSwift's: a program that imports
// ObserverSwift alone names them plainly or qualified by ObserverSwift, and
// the EngineDiagnostics SPI reaches ObserverCore's controls through it.
@_spi(EngineDiagnostics) import ObserverSwift

let event = Event<Int>()
let token: ObserverSwift.Subscription = event.subscribe { _ in }
let bag = ObserverSwift.SubscriptionBag()
token.store(in: bag)
let delivery: ObserverSwift.Delivery = .synchronous
let policy: ObserverSwift.ObserverBufferingPolicy = .bufferingNewest(1)
let tracked: [ObserverSwift.LiveSubscription] = ObserverSwift.ObserverCore.liveSubscriptions
let failure: ObserverSwift.ObserverError? = nil
let pending = ObserverCore.statistics.pendingBytes
try ObserverCore.reclaimNow()
print(token.debugDescription, delivery, policy, tracked.count, failure as Any, pending)

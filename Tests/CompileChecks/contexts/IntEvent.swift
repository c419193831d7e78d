// What a fragment on a Subscription page assumes: an event of Int.
let event = Event<Int>()
// fragment

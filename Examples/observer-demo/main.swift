import ObserverSwift

final class Screen {
    var titles: [String] = []
}

let titleChanged = Event<String>()
var screen: Screen? = Screen()
titleChanged.subscribe(screen!) { screen, title in screen.titles.append(title) }
let token = titleChanged.subscribe { title in print("closure got:", title) }
titleChanged.send("Inbox")
titleChanged.trigger("Drafts")
print("screen saw:", screen!.titles)
print("subscribers:", titleChanged.subscribersCount, "triggers:", titleChanged.triggersCount)
token.cancel()
screen = nil
titleChanged.send("Sent")
print("after cancel + dealloc, subscribers:", titleChanged.subscribersCount)
try ObserverCore.reclaimNow()
print(ObserverCore.statistics)

enum Callgrind {
    static func run(_ options: Options) {}
    static func runChild(_ arguments: [String]) {}
}

/// The name among `candidates` that reads closest to `name`, within `limit` edits, if any: what
/// a misspelt member or key most likely meant. Ties go to the first candidate.
public func closestName(to name: String, among candidates: some Sequence<String>, within limit: Int) -> String? {
    candidates.map { (name: $0, distance: editDistance(name, $0)) }
        .filter { $0.distance <= limit }
        .min { $0.distance < $1.distance }?.name
}

/// Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`.
public func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var previous = Array(0...b.count)
    for (i, x) in a.enumerated() {
        var current = [i + 1]
        for (j, y) in b.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
        }
        previous = current
    }
    return previous[b.count]
}

/// How one check came out.
public enum CheckStatus: String, Codable, Sendable, Comparable {
    case ok, warn, fail

    public static func < (lhs: CheckStatus, rhs: CheckStatus) -> Bool {
        [CheckStatus.ok, .warn, .fail].firstIndex(of: lhs)! < [CheckStatus.ok, .warn, .fail].firstIndex(of: rhs)!
    }
}

/// One line of the doctor's checklist: what was checked, how it came out, and, when it
/// is not ok, the fix in one line.
public struct Finding: Codable, Equatable, Sendable {
    /// What was checked: `daemon`, `device /dev/ttyUSB0`, `chrony`, ...
    public var check: String
    public var status: CheckStatus
    /// What was found.
    public var detail: String
    /// What to do about it; `nil` when there is nothing to do.
    public var fix: String?

    public init(_ check: String, _ status: CheckStatus, _ detail: String, fix: String? = nil) {
        self.check = check
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}

extension [Finding] {
    /// The checklist for a terminal: a line per finding, its fix indented below it.
    public var checklist: String {
        let width = Swift.min(28, map(\.check.count).max() ?? 0)
        return map { finding in
            let check = finding.check + String(repeating: " ", count: Swift.max(0, width - finding.check.count))
            let status = finding.status.rawValue + String(repeating: " ", count: 5 - finding.status.rawValue.count)
            var line = "\(status) \(check)  \(finding.detail)"
            if let fix = finding.fix { line += "\n      fix: \(fix)" }
            return line
        }.joined(separator: "\n")
    }

    /// The worst status among the findings.
    public var worst: CheckStatus { map(\.status).max() ?? .ok }
}

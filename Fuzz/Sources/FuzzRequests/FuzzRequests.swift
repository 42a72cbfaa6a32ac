// libFuzzer target: arbitrary client lines through the request parser, and what the
// server would answer them with. Besides not crashing, it checks that no line yields more
// requests than it has `?` (plus one for trailing junk), and that the ERROR answering an unrecognised request is one
// line of valid JSON, whatever bytes the request held.

import Foundation
import FuzzSupport
import GPSDProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequests(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    for line in input.split(separator: 10, omittingEmptySubsequences: false) {
        let requests = ClientRequest.parse(line: line)
        // One request per `?`, and one more for what follows the last when it is not one.
        let marks = line.count { $0 == UInt8(ascii: "?") }
        precondition(requests.count <= marks + 1, "\(requests.count) requests from a line with \(marks) marks")
        for case .unrecognized(let text) in requests {
            let report = SessionReport.error("Unrecognized request '\(text.prefix(80))'")
            precondition(report.last == 10 && report.dropLast().allSatisfy { $0 != 10 }, "an ERROR must be one line")
            let object = try? JSONSerialization.jsonObject(with: Data(report))
            precondition(object is [String: Any], "ERROR is not a JSON object: \(String(decoding: report, as: UTF8.self))")
        }
        if case .watch(let request?)? = requests.first {
            var settings = WatchSettings()
            settings.apply(request)
            let watch = SessionReport.watch(settings)
            precondition((try? JSONSerialization.jsonObject(with: Data(watch))) is [String: Any], "WATCH answer is not JSON")
        }
    }
    return 0
}

/// The entry point SwiftPM links this executable under.
@_cdecl("FuzzRequests_main")
public func fuzzRequestsMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzRequests(UnsafeRawPointer(data), size) }
}

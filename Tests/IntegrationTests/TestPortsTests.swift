import Foundation
import Testing

/// The ports the tests hand to the programs they start, which bind them later: four test
/// processes run side by side (scripts/test), one of them making connections by the
/// thousand, so a port must be one no connection can take meanwhile.
@Suite("Ports for the programs the tests start")
struct TestPortsTests {
    @Test("each port is handed out once, binds, and lies in the process's range, below the kernel's ephemeral ports")
    func portsAvoidTheEphemeralRange() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let ephemeral = try #require(bounds.count == 2 ? bounds[0]...bounds[1] : nil, "\(text)")
        let ports = (0..<64).map { _ in freePort() }
        #expect(Set(ports).count == ports.count)
        #expect(ports.allSatisfy(testPorts.contains), "\(ports) outside \(testPorts)")
        #expect(!ports.contains(where: ephemeral.contains), "\(ports) among the ephemeral ports \(ephemeral)")
    }
}

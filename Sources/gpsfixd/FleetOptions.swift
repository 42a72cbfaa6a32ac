#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import GPSFixMQTT
import Logging

/// How `--mqtt` and its options become the daemon's MQTT publisher.
extension GPSFixDaemon {
    /// The broker's publisher, one connection per device; the password from
    /// `--mqtt-password-file`, else `GPSFIX_MQTT_PASSWORD`, else the address.
    func fleetPublisher(url: String, devices: [String], environment: [String: String], logger: Logger) throws
        -> FleetPublisher<ContinuousClock>
    {
        var password = environment["GPSFIX_MQTT_PASSWORD"]
        if let mqttPasswordFile {
            guard let line = Self.firstLine(ofFile: mqttPasswordFile) else {
                throw ValidationError("--mqtt-password-file \(mqttPasswordFile) cannot be read: \(String(cString: strerror(errno)))")
            }
            guard !line.isEmpty else {
                throw ValidationError("--mqtt-password-file \(mqttPasswordFile) is empty: write the password on its first line")
            }
            password = line
        }
        let broker = try MQTTBroker(url: url).with(password: password)
        let configuration = FleetConfiguration(
            prefix: broker.prefix, format: mqttFormat, interval: .milliseconds(Int64(mqttInterval * 1000)), qos: mqttQos,
            homeAssistant: mqttHomeassistant ? HomeAssistantOptions(prefix: mqttHomeassistantPrefix, release: Self.release) : nil)
        logger.info("publishing to MQTT", metadata: ["broker": "\(broker.description)", "topics": "\(configuration.prefix)/DEVICE/..."])
        return try FleetPublisher(devices: devices, configuration: configuration, clock: ContinuousClock(), logger: logger) {
            clientID, will throws(MQTTError) in
            try MosquittoPublisher(options: .init(broker: broker, clientID: clientID, will: will, certificateAuthorities: mqttCa))
        }
    }

    /// The first line of a file, without its line end; `nil` if it cannot be read.
    static func firstLine(ofFile path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        guard getline(&line, &capacity, file) >= 0, let line else { return "" }
        return String(cString: line).filter { $0 != "\n" && $0 != "\r" && $0 != "\r\n" }
    }
}

extension FleetConfiguration.Format: ExpressibleByArgument {}

#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import GPSFixMQTT
import Logging

/// How `--mqtt` and its options become the daemon's MQTT publisher.
extension GPSFixDaemon {
    /// The status the daemon ends with when MQTT is configured and libmosquitto cannot be
    /// loaded (EX_UNAVAILABLE): a library that cannot be loaded stays so, and the unit does
    /// not restart on it (rather than every 2 s, the clock's feed with it).
    static let unavailableStatus = ExitCode(69)

    /// Why the configured MQTT output cannot run here (libmosquitto cannot be loaded), or
    /// `nil`: the daemon ends on it at start, and `--check-config` reports it.
    var mqttUnavailability: String? {
        mqtt == nil ? nil : MosquittoPublisher.unavailability
    }

    /// The broker's publisher, one connection per device; the password from
    /// `--mqtt-password-file`, else `GPSFIX_MQTT_PASSWORD`, else the address.
    func fleetPublisher(url: String, devices: [String], environment: [String: String], logger: Logger) throws
        -> FleetPublisher<ContinuousClock>
    {
        if let reason = mqttUnavailability {
            logger.critical("\(reason)")
            throw Self.unavailableStatus
        }
        var password = environment["GPSFIX_MQTT_PASSWORD"]
        if let mqttPasswordFile { password = try Secrets.firstLine(of: mqttPasswordFile, option: "--mqtt-password-file") }
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
}

extension FleetConfiguration.Format: ExpressibleByArgument {}

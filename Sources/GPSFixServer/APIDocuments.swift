import GPSDProtocol
import GPSFix
import NIOCore
import OutputFormats

/// The HTTP API's documents (`/api/v1/...`), from the hub's state: JSON with a stable
/// schema in which every field is present, `null` where there is no value (clients of
/// gpsd's JSON trip over omitted keys). ``schema`` describes them all.
extension Hub {
    /// `/api/v1/devices`: every device as DEVICES describes it.
    func devicesDocument() -> [UInt8] {
        eventLoop.assertInEventLoop()
        var json = JSONWriter(objectWithCapacity: 512)
        json.nested("devices", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
            for state in deviceOrder.compactMap({ devices[$0] }) {
                let info = state.info
                list.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { device in
                    device.field("path", string: info.path)
                    device.field("driver", orNull: info.driver)
                    device.field("activated", orNull: info.activated)
                    device.field("online", info.online)
                    device.field("bps", orNull: info.line?.bps)
                    device.field("parity", orNull: info.line.map { String($0.parity) })
                    device.field("stopbits", orNull: info.line?.stopBits)
                    device.field("cycle", orNull: info.cycle, decimals: 2)
                }
            }
        }
        return json.finish()
    }

    /// `/api/v1/fix`: the latest TPV of every device, and its age.
    func fixDocument() -> [UInt8] {
        eventLoop.assertInEventLoop()
        let now = NIODeadline.now()
        var json = JSONWriter(objectWithCapacity: 1024)
        json.nested("fixes", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
            for path in deviceOrder {
                guard let state = devices[path] else { continue }
                let fix = state.fix ?? Fix()
                let age = state.lastFixAt.map { Double((now - $0).nanoseconds) / 1e9 }
                list.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { item in
                    APIEntries.writeFix(fix, device: path, age: age, into: &item)
                }
            }
        }
        return json.finish()
    }

    /// `/api/v1/sky`: every device's satellites and DOPs.
    func skyDocument() -> [UInt8] {
        eventLoop.assertInEventLoop()
        var json = JSONWriter(objectWithCapacity: 4096)
        json.nested("skies", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
            for path in deviceOrder {
                let sky = devices[path]?.sky ?? SkyView()
                list.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { item in
                    APIEntries.writeSky(sky, device: path, into: &item)
                }
            }
        }
        return json.finish()
    }

    /// `/api/v1/status`: the clients, each device's health, and the services beside the
    /// hub (one line each, `null` where a service does not run), pushed to pages as the
    /// `status` event too.
    func statusDocument(services: StatusLines) -> [UInt8] {
        eventLoop.assertInEventLoop()
        let snapshot = self.snapshot
        var json = JSONWriter(class: "STATUS", capacity: 1024)
        json.nested("clients", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { clients in
            clients.field("connected", snapshot.clients.connected)
            clients.field("accepted", snapshot.clients.accepted)
            clients.field("cutOff", snapshot.clients.cutOff)
            clients.field("reportsSent", snapshot.clients.reportsSent)
            clients.field("reportsDropped", snapshot.clients.reportsDropped)
            clients.field("requestsRefused", snapshot.clients.requestsRefused)
            clients.field("connections", snapshot.clients.connections)
            clients.field("idleClosed", snapshot.clients.idleClosed)
            clients.field("evicted", snapshot.clients.evicted)
            clients.field("refusedAtCap", snapshot.clients.refusedAtCap)
            // Each side's connections against its own cap: the doctor reports them.
            let sides: [(StaticString, ServerSnapshot.ConnectionSide)] = [
                ("network", snapshot.clients.network), ("local", snapshot.clients.local),
            ]
            for (name, side) in sides {
                clients.nested(name, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { fields in
                    fields.field("connections", side.connections)
                    fields.field("cap", side.cap)
                    fields.field("perListener", side.perListener)
                }
            }
        }
        json.nested("devices", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
            for device in snapshot.devices {
                list.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { item in
                    item.field("path", string: device.path)
                    item.field("online", device.online)
                    item.field("mode", orNull: device.mode?.rawValue)
                    item.field("cycles", device.counters.assembly.cycles)
                    item.field("sentences", device.counters.framing.sentences)
                    item.field("rejected", device.counters.framing.rejected)
                    item.field("reconnects", device.counters.reconnects)
                    if let survey = device.counters.survey {
                        item.nested("survey", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { fields in
                            fields.field("duration", Int(survey.duration))
                            fields.field("accuracy", survey.accuracy, decimals: 4)
                            fields.field("observations", Int(survey.observations))
                            fields.field("valid", survey.isValid)
                            fields.field("active", survey.isActive)
                        }
                    } else {
                        item.field("survey", orNull: Int?.none)
                    }
                    item.field("baseReady", device.isBaseReady)
                }
            }
        }
        json.nested("services", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { lines in
            lines.field("timeService", orNull: services.timeService)
            lines.field("mqtt", orNull: services.mqtt)
            lines.field("traccar", orNull: services.traccar)
            lines.field("ntrip", orNull: services.ntrip)
            lines.field("nmeaOutput", orNull: nmeaOutputLine)
            lines.field("receivers", orNull: services.receivers)
        }
        return json.finish()
    }

    /// NMEA 0183 out's line in the status: its clients, or `nil` when it is off.
    private var nmeaOutputLine: String? {
        let feeds = sessions.values.filter(\.isNMEAFeed).count
        guard feeds > 0 || nmeaDatagrams != nil else { return nil }
        return "\(feeds) clients" + (nmeaDatagrams.map { ", UDP \($0.sent) sent, \($0.dropped) dropped" } ?? "")
    }
}

/// The services beside the hub, as their status lines: `nil` for one that does not run.
public struct StatusLines: Sendable {
    public var timeService: String?
    public var mqtt: String?
    public var traccar: String?
    /// RTK corrections from an NTRIP caster to a receiver.
    public var ntrip: String?
    /// Whether the receivers kept by a `[receiver]` table are as it says.
    public var receivers: String?

    public init(
        timeService: String? = nil, mqtt: String? = nil, traccar: String? = nil, ntrip: String? = nil, receivers: String? = nil
    ) {
        self.timeService = timeService
        self.mqtt = mqtt
        self.traccar = traccar
        self.ntrip = ntrip
        self.receivers = receivers
    }
}

#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import ProcessTable

/// A TCP address the daemon cannot listen on because another program holds it: the error
/// names the address and, when `/proc` tells, who holds it (gpsd, or systemd for gpsd's
/// socket unit, which installing gpsd enables).
public struct AddressInUse: Error, CustomStringConvertible {
    /// `127.0.0.1:2947`, `[::1]:2947`.
    public let address: String
    /// The processes listening on its port; empty when `/proc` does not say.
    public let holders: [ProcessTable.Process]

    public var description: String {
        var text = "cannot listen on \(address): the address is in use"
        if let holder = holders.first {
            text += holder.id == 1 || holder.name == "systemd"
                ? " by systemd, for a socket unit (gpsd.socket, if gpsd is installed: systemctl disable --now gpsd.socket gpsd.service)"
                : " by \(holder.name) (pid \(holder.id))"
        }
        return text + "; stop it, or choose another port"
    }
}

/// An address or a socket path the daemon cannot listen on for another reason: the error
/// names it (the system's own names only the call that failed), and what to do for the
/// common ones.
public struct CannotListen: Error, CustomStringConvertible {
    /// What was to be listened on.
    public enum Address: Sendable, CustomStringConvertible {
        case unixSocket(path: String)
        case tcp(host: String, port: Int)

        /// `/run/gpsfixd/gpsfixd.sock`, `127.0.0.1:2947`, `[::1]:2947`.
        public var description: String {
            switch self {
            case .unixSocket(let path): path
            case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            }
        }
    }

    public let address: Address
    public let errno: Int32

    public var description: String {
        let advice: String?
        switch address {
        case .unixSocket:
            advice = switch errno {
            case ENOENT: "its folder does not exist: make it, or choose another path"
            case EACCES, EPERM, EROFS: "this user may not write its folder: choose another path"
            default: nil
            }
        case .tcp(_, let port):
            advice = switch errno {
            case EACCES where port < 1024, EPERM where port < 1024:
                "a port below 1024 takes a privilege the daemon does not keep: choose a port above it"
            case EADDRNOTAVAIL: "no interface of this machine has that address"
            default: nil
            }
        }
        return "cannot listen on \(address): \(String(cString: strerror(errno)))" + (advice.map { " (\($0))" } ?? "")
    }
}

extension GPSFixServer {
    /// Binds `bootstrap` on TCP `host`:`port`; an address in use is an ``AddressInUse``,
    /// another refusal a ``CannotListen``.
    func bind(_ bootstrap: ServerBootstrap, host: String, port: Int) async throws -> any Channel {
        let address = CannotListen.Address.tcp(host: host, port: port)
        do {
            return try await bootstrap.bind(host: host, port: port).get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw AddressInUse(address: address.description, holders: ProcessTable().listeners(ofTCPPort: port))
        } catch let error as IOError {
            throw CannotListen(address: address, errno: error.errnoCode)
        }
    }
}

import gpsfix
import gpsfixd

#if canImport(Glibc)
import Glibc
#endif

// One binary for both commands, as packaged: called as gpsfixd (a link to it), it is the
// daemon; as anything else, the tool.
let calledAs = CommandLine.arguments.first?.split(separator: "/").last ?? ""
if calledAs == "gpsfixd" {
    // The process's name too (ps, the doctor, systemd), when it was started under another
    // (`exec -a gpsfixd gpsfix`); its threads take it from here.
    let comm = open("/proc/self/comm", O_WRONLY | O_CLOEXEC)
    if comm >= 0 {
        _ = write(comm, "gpsfixd", 7)
        close(comm)
    }
    DaemonCommand.run()
} else {
    ToolCommand.run()
}

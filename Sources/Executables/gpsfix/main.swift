import gpsfix
import gpsfixd

// One binary for both commands, as packaged: called as gpsfixd (a link to it), it is the
// daemon; as anything else, the tool.
let calledAs = CommandLine.arguments.first?.split(separator: "/").last ?? ""
if calledAs == "gpsfixd" {
    await DaemonCommand.main()
} else {
    await ToolCommand.main()
}

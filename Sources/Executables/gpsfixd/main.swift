import gpsfixd

DaemonCommand.run()

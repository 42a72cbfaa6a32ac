import gpsfixd

await DaemonCommand.main()

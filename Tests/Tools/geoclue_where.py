#!/usr/bin/python3
"""Asks geoclue for a location over D-Bus, as a desktop app (where-am-i) does, with an agent
of its own that allows it: prints 'LAT LON' of the first location geoclue reports.

Usage: geoclue_where.py [SECONDS]   (the bus: DBUS_SYSTEM_BUS_ADDRESS)
"""
import sys
import time
import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
AGENT = "org.freedesktop.GeoClue2.Agent"


class Agent(dbus.service.Object):
    @dbus.service.method(AGENT, in_signature="su", out_signature="bu")
    def AuthorizeApp(self, desktop_id, accuracy):
        return True, accuracy

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return dbus.UInt32(8)

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"MaxAccuracyLevel": dbus.UInt32(8)}


agent = Agent(bus, "/org/freedesktop/GeoClue2/Agent")
# geoclue may still be starting: wait for it to own its name, ten seconds at most.
for _ in range(100):
    if bus.name_has_owner("org.freedesktop.GeoClue2"):
        break
    time.sleep(0.1)
manager = bus.get_object("org.freedesktop.GeoClue2", "/org/freedesktop/GeoClue2/Manager")
loop = GLib.MainLoop()


def updated(old, new):
    location = dbus.Interface(bus.get_object("org.freedesktop.GeoClue2", new), dbus.PROPERTIES_IFACE)
    lat = location.Get("org.freedesktop.GeoClue2.Location", "Latitude")
    lon = location.Get("org.freedesktop.GeoClue2.Location", "Longitude")
    print("%.7f %.7f" % (lat, lon), flush=True)
    loop.quit()


def failed(error):
    print("geoclue: %s" % error, file=sys.stderr, flush=True)
    loop.quit()


def got_client(client_path):
    client = bus.get_object("org.freedesktop.GeoClue2", client_path)
    props = dbus.Interface(client, dbus.PROPERTIES_IFACE)
    props.Set("org.freedesktop.GeoClue2.Client", "DesktopId", "where-am-i")
    props.Set("org.freedesktop.GeoClue2.Client", "RequestedAccuracyLevel", dbus.UInt32(8))
    client.connect_to_signal("LocationUpdated", updated, dbus_interface="org.freedesktop.GeoClue2.Client")
    client.Start(dbus_interface="org.freedesktop.GeoClue2.Client", reply_handler=lambda: None, error_handler=failed)


def agent_added():
    manager.GetClient(dbus_interface="org.freedesktop.GeoClue2.Manager", reply_handler=got_client, error_handler=failed)


# Asynchronous: geoclue asks the agent for its properties before it answers.
manager.AddAgent("geoclue-demo-agent", dbus_interface="org.freedesktop.GeoClue2.Manager",
                 reply_handler=agent_added, error_handler=failed)
GLib.timeout_add_seconds(int(sys.argv[1]) if len(sys.argv) > 1 else 20, loop.quit)
loop.run()

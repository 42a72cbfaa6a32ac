/// The HTTP API's JSON Schema (`/api/v1/schema`): every document's fields, each always
/// present, `null` where there is no value.
enum APISchema {
    static let document: [UInt8] = Array((text + "\n").utf8)

    private static let text = #"""
        {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "$id": "gpsfix:/api/v1/schema",
          "title": "GPSFix HTTP API v1",
          "$defs": {
            "number": {"type": ["number", "null"]},
            "integer": {"type": ["integer", "null"]},
            "string": {"type": ["string", "null"]},
            "devices": {
              "type": "object", "additionalProperties": false, "required": ["devices"],
              "properties": {"devices": {"type": "array", "items": {
                "type": "object", "additionalProperties": false,
                "required": ["path", "driver", "activated", "online", "bps", "parity", "stopbits", "cycle"],
                "properties": {
                  "path": {"type": "string"}, "driver": {"$ref": "#/$defs/string"}, "activated": {"$ref": "#/$defs/string"},
                  "online": {"type": "boolean"}, "bps": {"$ref": "#/$defs/integer"}, "parity": {"$ref": "#/$defs/string"},
                  "stopbits": {"$ref": "#/$defs/integer"}, "cycle": {"$ref": "#/$defs/number"}}}}}
            },
            "fix": {
              "type": "object", "additionalProperties": false, "required": ["fixes"],
              "properties": {"fixes": {"type": "array", "items": {
                "type": "object", "additionalProperties": false,
                "required": ["device", "time", "mode", "status", "lat", "lon", "altHAE", "altMSL", "speed", "track", "climb", "eph", "epv", "dgpsAge", "dgpsSta", "age"],
                "properties": {
                  "device": {"type": "string"}, "time": {"$ref": "#/$defs/string"}, "mode": {"type": "integer", "minimum": 0, "maximum": 3},
                  "status": {"$ref": "#/$defs/integer"}, "lat": {"$ref": "#/$defs/number"}, "lon": {"$ref": "#/$defs/number"},
                  "altHAE": {"$ref": "#/$defs/number"}, "altMSL": {"$ref": "#/$defs/number"}, "speed": {"$ref": "#/$defs/number"},
                  "track": {"$ref": "#/$defs/number"}, "climb": {"$ref": "#/$defs/number"}, "eph": {"$ref": "#/$defs/number"},
                  "epv": {"$ref": "#/$defs/number"}, "dgpsAge": {"$ref": "#/$defs/number"},
                  "dgpsSta": {"$ref": "#/$defs/integer"}, "age": {"$ref": "#/$defs/number"}}}}}
            },
            "sky": {
              "type": "object", "additionalProperties": false, "required": ["skies"],
              "properties": {"skies": {"type": "array", "items": {
                "type": "object", "additionalProperties": false,
                "required": ["device", "time", "hdop", "vdop", "pdop", "tdop", "gdop", "xdop", "ydop", "nSat", "uSat", "satellites"],
                "properties": {
                  "device": {"type": "string"}, "time": {"$ref": "#/$defs/string"}, "hdop": {"$ref": "#/$defs/number"},
                  "vdop": {"$ref": "#/$defs/number"}, "pdop": {"$ref": "#/$defs/number"}, "tdop": {"$ref": "#/$defs/number"},
                  "gdop": {"$ref": "#/$defs/number"}, "xdop": {"$ref": "#/$defs/number"}, "ydop": {"$ref": "#/$defs/number"},
                  "nSat": {"type": "integer"}, "uSat": {"$ref": "#/$defs/integer"},
                  "satellites": {"type": "array", "items": {
                    "type": "object", "additionalProperties": false, "required": ["PRN", "gnssid", "svid", "el", "az", "ss", "used"],
                    "properties": {
                      "PRN": {"type": "integer"}, "gnssid": {"type": "integer", "minimum": 0, "maximum": 7}, "svid": {"type": "integer"},
                      "el": {"$ref": "#/$defs/number"}, "az": {"$ref": "#/$defs/number"}, "ss": {"$ref": "#/$defs/number"},
                      "used": {"type": "boolean"}}}}}}}}
            },
            "connectionSide": {
              "type": "object", "additionalProperties": false, "required": ["connections", "cap", "perListener"],
              "properties": {"connections": {"type": "integer"}, "cap": {"type": "integer"}, "perListener": {"type": "integer"}}
            },
            "status": {
              "type": "object", "additionalProperties": false, "required": ["class", "clients", "devices", "services"],
              "properties": {
                "class": {"const": "STATUS"},
                "clients": {"type": "object", "additionalProperties": false,
                  "required": ["connected", "accepted", "cutOff", "reportsSent", "reportsDropped", "requestsRefused",
                    "connections", "idleClosed", "evicted", "refusedAtCap", "network", "local"],
                  "properties": {"connected": {"type": "integer"}, "accepted": {"type": "integer"}, "cutOff": {"type": "integer"},
                    "reportsSent": {"type": "integer"}, "reportsDropped": {"type": "integer"}, "requestsRefused": {"type": "integer"},
                    "connections": {"type": "integer"}, "idleClosed": {"type": "integer"}, "evicted": {"type": "integer"},
                    "refusedAtCap": {"type": "integer"}, "network": {"$ref": "#/$defs/connectionSide"},
                    "local": {"$ref": "#/$defs/connectionSide"}}},
                "devices": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                  "required": ["path", "online", "mode", "cycles", "sentences", "rejected", "reconnects", "survey", "baseReady"],
                  "properties": {"path": {"type": "string"}, "online": {"type": "boolean"}, "mode": {"$ref": "#/$defs/integer"},
                    "cycles": {"type": "integer"}, "sentences": {"type": "integer"}, "rejected": {"type": "integer"},
                    "reconnects": {"type": "integer"},
                    "survey": {"oneOf": [{"type": "null"}, {"type": "object", "additionalProperties": false,
                      "required": ["duration", "accuracy", "observations", "valid", "active"],
                      "properties": {"duration": {"type": "integer"}, "accuracy": {"type": "number"},
                        "observations": {"type": "integer"}, "valid": {"type": "boolean"}, "active": {"type": "boolean"}}}]},
                    "baseReady": {"type": "boolean"}}}},
                "services": {"type": "object", "additionalProperties": false,
                  "required": ["timeService", "mqtt", "traccar", "ntrip", "nmeaOutput", "receivers"],
                  "properties": {"timeService": {"$ref": "#/$defs/string"}, "mqtt": {"$ref": "#/$defs/string"},
                    "traccar": {"$ref": "#/$defs/string"}, "ntrip": {"$ref": "#/$defs/string"}, "nmeaOutput": {"$ref": "#/$defs/string"}, "receivers": {"$ref": "#/$defs/string"}}}}
            }
          }
        }
        """#
}

extension Fix {
    /// Sets the position on the ellipsoid, with the altitude above sea level and the
    /// geoid's separation from gpsd's model: for receivers that give only the former.
    public mutating func setPosition(latitude: Double, longitude: Double, height: Double) {
        let separation = Geoid.separation(latitude: latitude, longitude: longitude)
        self.latitude = latitude
        self.longitude = longitude
        altitudeHAE = height
        altitudeMSL = height - separation
        geoidSeparation = separation
    }

    /// Sets the position from an Earth-centred point, metres, and the motion from an
    /// Earth-centred velocity, metres a second, when one is given: velocity, speed, track,
    /// and climb in a 3D fix. A point at the Earth's centre (gpsd's test of an empty
    /// solution) sets nothing.
    public mutating func setPosition(
        ecef point: (x: Double, y: Double, z: Double), velocity: (x: Double, y: Double, z: Double)?
    ) {
        guard abs(point.x) + abs(point.y) + abs(point.z) > 10 else { return }
        let position = Geodesy.geodetic(x: point.x, y: point.y, z: point.z)
        setPosition(latitude: position.latitude, longitude: position.longitude, height: position.height)
        if let velocity { setMotion(ecef: velocity, latitude: position.latitude, longitude: position.longitude) }
    }

    /// Sets velocity, speed and track from an Earth-centred velocity at a place, and
    /// climb in a 3D fix.
    public mutating func setMotion(ecef velocity: (x: Double, y: Double, z: Double), latitude: Double, longitude: Double) {
        let local = Geodesy.localVelocity(x: velocity.x, y: velocity.y, z: velocity.z, latitude: latitude, longitude: longitude)
        self.velocity = local
        speed = (local.north * local.north + local.east * local.east).squareRoot()
        track = Geodesy.bearing(east: local.east, north: local.north)
        if mode == .threeDimensional { climb = -local.down }
    }
}

/// The status page at `/`: one file, no build step and nothing fetched from elsewhere
/// (it works on a boat without internet), live through `/events`.
enum WebPage {
    static let html: [UInt8] = PackageResources.index_html
}

import Hummingbird

/// `GET /metrics`, for Prometheus to scrape; outside `/v1/` because scrapers expect that path.
struct MetricsRoutes: Sendable {
    let metrics: DaemonMetrics

    func add(to router: APIRoutes) {
        router.router.get("metrics") { _, context in
            try context.authorize(.watch)
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }
}

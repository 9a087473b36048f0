//! With the `grpc` feature: tonic's client and server for grpc-uds's service,
//! generated from its description here (no .proto file, so no protoc).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(feature = "grpc")]
    grpc();
}

#[cfg(feature = "grpc")]
fn grpc() {
    use tonic_build::manual::{Builder, Method, Service};
    let method = |name: &str, route: &str| {
        Method::builder()
            .name(name)
            .route_name(route)
            .input_type("super::Chunk")
            .output_type("super::Chunk")
            .codec_path("tonic_prost::ProstCodec")
    };
    let echo = Service::builder()
        .name("Echo")
        .package("ipcperf")
        .method(method("unary", "Unary").build())
        .method(
            method("stream", "Stream")
                .client_streaming()
                .server_streaming()
                .build(),
        )
        .build();
    Builder::new().build_transport(false).compile(&[echo]);
}

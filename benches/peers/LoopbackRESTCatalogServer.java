/*
 * Apache Iceberg's reference REST catalog server, listening on 127.0.0.1 only.
 *
 * RESTCatalogServer.start (iceberg-open-api 1.10.1 test fixtures) builds its Jetty server with `new Server(port)`,
 * which listens on every interface, and offers no setting for the address. This launcher does what start() does,
 * step by step with the same classes (the backend catalog from RESTCatalogServer's own initializeBackendCatalog,
 * RESTServerCatalogAdapter, RESTCatalogServlet, a GzipHandler), and only gives the connector the loopback host.
 * It lives in the fixtures' package because the adapter and the catalog context are package-private there.
 */
package org.apache.iceberg.rest;

import java.lang.reflect.Method;
import org.apache.iceberg.util.PropertyUtil;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public final class LoopbackRESTCatalogServer {
  private LoopbackRESTCatalogServer() {}

  public static void main(String[] args) throws Exception {
    RESTCatalogServer reference = new RESTCatalogServer();
    Method init = RESTCatalogServer.class.getDeclaredMethod("initializeBackendCatalog");
    init.setAccessible(true);
    RESTCatalogServer.CatalogContext context = (RESTCatalogServer.CatalogContext) init.invoke(reference);

    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTServerCatalogAdapter(context))), "/*");
    handler.insertHandler(new GzipHandler());

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(PropertyUtil.propertyAsInt(context.configuration(), RESTCatalogServer.REST_PORT, 8181));
    connector.setReusePort(true);
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    server.join();
  }
}

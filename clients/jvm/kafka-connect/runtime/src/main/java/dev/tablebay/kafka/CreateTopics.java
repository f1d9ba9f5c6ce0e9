package dev.tablebay.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Creates topics before anything subscribes to them, as a deployment would: a consumer that subscribes to a
 * topic that does not exist yet only sees it at its next metadata refresh (minutes later).
 *
 * <pre>
 * java -cp 'lib/kafka/*' dev.tablebay.kafka.CreateTopics BOOTSTRAP PARTITIONS TOPIC...
 * </pre>
 */
public final class CreateTopics {
    private CreateTopics() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: CreateTopics BOOTSTRAP PARTITIONS TOPIC...");
            System.exit(2);
        }
        int partitions = Integer.parseInt(args[1]);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            topics.add(new NewTopic(args[i], partitions, (short) 1));
        }
        try (Admin admin = Admin.create(props)) {
            for (Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> e :
                    admin.createTopics(topics).values().entrySet()) {
                try {
                    e.getValue().get();
                    System.out.println("created topic " + e.getKey());
                } catch (ExecutionException ex) {
                    if (!(ex.getCause() instanceof TopicExistsException)) {
                        throw ex;
                    }
                    System.out.println("topic " + e.getKey() + " exists");
                }
            }
        }
    }
}

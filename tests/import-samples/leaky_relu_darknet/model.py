import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, in_2, in_3, in_4, in_5):
        tmp_0 = torch.conv2d(in_0, in_1, None, (1, 1), (1, 1), (1, 1), 1)
        tmp_1 = torch.nn.functional.batch_norm(tmp_0, in_2, in_3, in_5, in_4, False, 0.1, 1e-05)
        tmp_0 = None
        tmp_2 = torch.nn.functional.leaky_relu(tmp_1, 0.1, True)
        tmp_1 = None
        tmp_3 = torch.nn.functional.leaky_relu(in_0)
        tmp_4 = torch.nn.functional.leaky_relu(tmp_3, negative_slope=-2.5)
        return (tmp_2, tmp_4)
